import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import pg from 'pg';
import type { AgentCard } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory, type CallInterceptor, type Client } from '@a2a-js/sdk/client';
import type { UpstreamInterface } from '@app/contracts';
import { NotifierConfig } from '../../notifier.config';
import { UpstreamCredentialsService } from '../identity/upstream-credentials.service';
import { UpstreamHealthService } from '../health/upstream-health.service';
import { UpstreamTlsService } from '../identity/upstream-tls.service';

/** The header that names the sender of a handoff to an upstream agent (the same handle is in the message metadata). */
export const SENDER_HEADER = 'X-AgentRelay-Sender';
/** The header that names the relay task a request to an upstream agent is about. */
export const RELAY_TASK_HEADER = 'X-AgentRelay-Task';

/** The card the SDK client is made from: the one interface the relay chose when it read the upstream's card. */
function cardOf(upstream: UpstreamInterface): AgentCard {
  return {
    name: 'upstream',
    description: '',
    supportedInterfaces: [{ url: upstream.url, protocolBinding: upstream.binding, tenant: '', protocolVersion: upstream.protocol_version }],
    provider: undefined,
    version: '',
    capabilities: { streaming: upstream.streaming, pushNotifications: upstream.push_notifications, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: [],
    defaultOutputModes: [],
    skills: [],
    signatures: [],
  };
}

/** Puts the credential's headers on every call of the client, beside the call's own (the sender, the relay task). */
function headersInterceptor(headers: () => Promise<Record<string, string>>): CallInterceptor {
  return {
    async before(args) {
      args.options = { ...args.options, serviceParameters: { ...args.options?.serviceParameters, ...(await headers()) } };
    },
    async after() {},
  };
}

/** The headers of one call about a relay task: which task, and (a delivery) who sent it. */
export function callHeaders(taskId: string, sender?: string): Record<string, string> {
  return { [RELAY_TASK_HEADER]: taskId, ...(sender !== undefined ? { [SENDER_HEADER]: sender } : {}) };
}

/**
 * The official SDK's A2A client for an upstream agent's interface: JSON-RPC or HTTP+JSON, v1.0 or
 * (through the SDK's compat layer) v0.3, every request through `fetchImpl` (the SSRF-guarded one)
 * with the credential's `headers` on it (each call gives its own, `callHeaders`, as `serviceParameters`).
 */
export function upstreamClient(upstream: UpstreamInterface, fetchImpl: typeof fetch, headers: () => Promise<Record<string, string>>): Promise<Client> {
  const legacyCompat = { enabled: true };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat }), new RestTransportFactory({ fetchImpl, legacyCompat })],
      clientConfig: { interceptors: [headersInterceptor(headers)] },
    }),
  );
  return factory.createFromAgentCard(cardOf(upstream));
}

/** The Postgres channel the notifier's tables name an upstream agent on when its credential, client identity or accepted card change (migration UpstreamChangeNotices). */
export const UPSTREAM_CHANGED_CHANNEL = 'agentrelay_upstream_changed';
/** How soon a lost listening session is opened again. */
const RELISTEN_MS = 1000;

interface HeldClient {
  /** The interface the client was made for, as the agent's target held it: another one (an agent event) makes it again. */
  upstream: UpstreamInterface;
  client: Client;
}

/**
 * The SDK client of each upstream agent, made once and kept: its interface as the agent targets
 * hold it (refreshed by the directory's agent events), its credential and mTLS identity as the
 * notifier's tables hold them. A client is made again when the agent's interface changes, when
 * its credential, identity or accepted card change in any replica (the tables' change notices,
 * listened to on a session of its own), or when the upstream refused its token. While this
 * replica does not listen (starting, or the session was lost) nothing is kept: each request
 * reads them, as if nothing were.
 */
@Injectable()
export class UpstreamClientsService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(UpstreamClientsService.name);
  /** By handle, then by the request timeout the client's fetch holds exchanges to. */
  private readonly held = new Map<string, Map<number, HeldClient>>();
  /** Bumped when a handle's clients are dropped: a client made across a change is not kept. */
  private readonly generations = new Map<string, number>();
  private session: pg.Client | null = null;
  private listening = false;
  private stopping = false;
  private relisten: NodeJS.Timeout | null = null;

  constructor(
    @Inject(NotifierConfig) private readonly config: NotifierConfig,
    @Inject(UpstreamCredentialsService) private readonly credentials: UpstreamCredentialsService,
    @Inject(UpstreamHealthService) private readonly health: UpstreamHealthService,
    @Inject(UpstreamTlsService) private readonly tls: UpstreamTlsService,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.listen();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.relisten) clearTimeout(this.relisten);
    this.listening = false;
    await this.session?.end().catch(() => undefined);
  }

  /** The client for requests to this agent's interface, each exchange within `timeoutMs`. */
  async clientFor(handle: string, upstream: UpstreamInterface, timeoutMs: number): Promise<Client> {
    const kept = this.held.get(handle)?.get(timeoutMs);
    if (kept && kept.upstream === upstream && this.listening) return kept.client;
    const generation = this.generations.get(handle) ?? 0;
    const listening = this.listening;
    const fetchImpl = this.health.fetchFor(handle, timeoutMs, { tls: await this.tls.get(handle), keepAlive: true });
    const client = await upstreamClient(upstream, fetchImpl, await this.credentials.authFor(handle, upstream));
    // Kept only if nothing changed while it was made (and a change notice would have reached this replica).
    if (listening && this.listening && (this.generations.get(handle) ?? 0) === generation) {
      let byTimeout = this.held.get(handle);
      if (!byTimeout) this.held.set(handle, (byTimeout = new Map()));
      byTimeout.set(timeoutMs, { upstream, client });
    }
    return client;
  }

  /** Drops the agent's clients (its credential, identity or card changed, or the upstream refused its token): the next request makes one. */
  forget(handle: string): void {
    this.generations.set(handle, (this.generations.get(handle) ?? 0) + 1);
    this.held.delete(handle);
  }

  private forgetAll(): void {
    for (const handle of this.held.keys()) this.forget(handle);
    this.held.clear();
  }

  private async listen(): Promise<void> {
    if (this.stopping) return;
    const session = new pg.Client({ connectionString: this.config.DATABASE_URL, application_name: 'agentrelay-notifier-upstream-changes' });
    const lost = (error?: Error): void => {
      if (this.session !== session) return;
      this.session = null;
      this.listening = false;
      this.forgetAll();
      if (this.stopping) return;
      this.logger.warn({ err: error }, 'lost the session that hears of upstream credential changes; upstream clients are made per request until it is back');
      void session.end().catch(() => undefined);
      this.relisten = setTimeout(() => {
        this.relisten = null;
        void this.listen();
      }, RELISTEN_MS);
    };
    session.on('error', lost);
    session.on('end', () => lost());
    session.on('notification', (notice) => {
      if (notice.channel === UPSTREAM_CHANGED_CHANNEL && notice.payload) this.forget(notice.payload);
    });
    this.session = session;
    try {
      await session.connect();
      await session.query(`LISTEN ${UPSTREAM_CHANGED_CHANNEL}`);
      if (this.session === session) this.listening = true;
    } catch (error) {
      lost(error as Error);
    }
  }
}
