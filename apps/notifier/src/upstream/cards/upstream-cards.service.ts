import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import {
  DIRECTORY_SUBJECTS,
  RelayError,
  UPSTREAM_LIMITS,
  type AgentRecord,
  type UpstreamCardChange,
  type UpstreamCardSnapshot,
  type UpstreamChangeDecisionReply,
  type UpstreamInterface,
  type UpstreamPendingChange,
  type UpstreamRefreshOutcome,
  type UpstreamRefreshReply,
  type UpstreamStatusView,
} from '@app/contracts';
import { pgPoolOf, withTryAdvisoryLock } from '@app/database';
import { NatsRpcClient } from '@app/messaging';
import { checkWebhookUrl, SsrfRefusedError } from '../../outbound/ssrf-guard';
import { NotifierConfig, upstreamPrivateTargets } from '../../notifier.config';
import { DirectoryClient } from '../../targets/directory-client.service';
import { parseAgentCard, type ParsedAgentCard } from './agent-card';
import { diffCards, interfaceOf, snapshotOf, withChanges } from './card-diff';
import { fetchJson, type ClientTls } from '../../outbound/guarded-fetch';
import { UpstreamHealthService } from '../health/upstream-health.service';
import { UpstreamTlsService } from '../identity/upstream-tls.service';

/** The longest the relay takes to read an agent card, headers and body (below the admin API's NATS request timeout). */
export const CARD_TIMEOUT_MS = 4000;
/** The advisory lock the replica that refreshes cards on the schedule holds while it does. */
const REFRESH_LOCK = 'agentrelay.notifier.upstream_card_refresh';
/** Cards refreshed in one scheduled round at most (the rest in the next). */
const ROUND_SIZE = 100;
/** Cards of one scheduled round read at once. */
const ROUND_CONCURRENCY = 8;
/** How often the schedule looks for cards due (never less often than the refresh interval). */
const TICK_MAX_MS = 60_000;
/** The longest a scheduled round goes on starting refreshes: the cards it did not reach by then are the next round's. */
const ROUND_DEADLINE_MS = TICK_MAX_MS;
/** The longest one card's refresh holds its place in a round (its read is held to the card deadline; the rest are NATS and database calls). */
const REFRESH_DEADLINE_MS = 3 * CARD_TIMEOUT_MS;

/** Why a card could not be read or used: a 400 at registration, a failed refresh later. */
export class CardReadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CardReadError';
  }
}

interface CardRow {
  accepted: UpstreamCardSnapshot | null;
  pending: UpstreamPendingChange | null;
  rejected_digest: string | null;
  last_refresh_at: Date | null;
  last_refresh_error: string | null;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  last_failure_method: UpstreamStatusView['health']['last_failure_method'];
  last_failure_reason: string | null;
}

/** JSON with object keys sorted (jsonb gives them back in its own order). */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const object = value as Record<string, unknown>;
    return `{${Object.keys(object)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The reviewed changes as one value: an operator's rejection is of exactly these. */
function digestOf(changes: readonly UpstreamCardChange[]): string {
  return createHash('sha256')
    .update(canonicalJson(changes.map((change) => [change.field, change.new])))
    .digest('hex');
}

const iso = (value: Date | null): string | null => (value ? new Date(value).toISOString() : null);

/** Whether two interfaces deliver alike (when the card was read aside). */
function sameInterface(left: UpstreamInterface, right: UpstreamInterface): boolean {
  return isDeepStrictEqual({ ...left, card_fetched_at: null }, { ...right, card_fetched_at: null });
}

/**
 * Upstream agents' cards after registration: read again on demand (admin API) and on a schedule
 * (RELAY_UPSTREAM_CARD_REFRESH_MS, by the one replica that holds the advisory lock). A change of
 * the profile (name, description, skills) takes effect at once; a change of where, how or as whom
 * the relay talks to the agent (URL, binding, protocol version, capabilities, security) waits as a
 * pending change until an operator accepts it, and deliveries go on against the accepted card.
 */
@Injectable()
export class UpstreamCardsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(UpstreamCardsService.name);
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<unknown> | null = null;
  private stopping = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(NotifierConfig) private readonly config: NotifierConfig,
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(DirectoryClient) private readonly directory: DirectoryClient,
    @Inject(UpstreamHealthService) private readonly health: UpstreamHealthService,
    @Inject(UpstreamTlsService) private readonly tls: UpstreamTlsService,
  ) {}

  onApplicationBootstrap(): void {
    const intervalMs = this.config.RELAY_UPSTREAM_CARD_REFRESH_MS;
    if (intervalMs <= 0) return;
    this.timer = setInterval(
      () => {
        if (!this.round) this.round = this.refreshDue().finally(() => (this.round = null));
      },
      Math.min(intervalMs, TICK_MAX_MS),
    );
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.round?.catch(() => undefined);
  }

  /**
   * Reads a card through the SSRF guard (at most 256 KiB, whole within CARD_TIMEOUT_MS, with the agent's mTLS identity: the
   * stored one, or `tls` at registration) and checks the interface it offers against the guard too.
   */
  async readCard(handle: string, cardUrl: string, tls?: ClientTls | null): Promise<ParsedAgentCard> {
    const allowPrivate = upstreamPrivateTargets(this.config);
    let document: unknown;
    try {
      checkWebhookUrl(cardUrl, allowPrivate);
      const fetchImpl = this.health.fetchFor(handle, Math.min(CARD_TIMEOUT_MS, this.config.RELAY_WEBHOOK_TIMEOUT_MS), {
        method: 'GetAgentCard',
        tls: tls !== undefined ? tls : await this.tls.get(handle),
        maxAnswerBytes: UPSTREAM_LIMITS.cardBytes,
      });
      document = await fetchJson(cardUrl, UPSTREAM_LIMITS.cardBytes, fetchImpl);
    } catch (error) {
      const reason = error instanceof SsrfRefusedError ? `refused: ${error.message}` : (error as Error).message;
      throw new CardReadError(`the agent card could not be read (${reason})`);
    }
    let card: ParsedAgentCard;
    try {
      card = parseAgentCard(document);
    } catch (error) {
      throw new CardReadError((error as Error).message);
    }
    try {
      checkWebhookUrl(card.url, allowPrivate);
    } catch (error) {
      throw new CardReadError(`the card's ${card.binding} interface ${card.url} is refused: ${(error as Error).message}`);
    }
    return card;
  }

  /** The card a registration read is the accepted one (a handle registered again starts over); in the caller's transaction. */
  async registered(manager: EntityManager, handle: string, accepted: UpstreamCardSnapshot): Promise<void> {
    await manager.query(
      `INSERT INTO "notifier"."upstream_agents" ("handle", "accepted", "last_refresh_at") VALUES ($1, $2, now())
       ON CONFLICT ("handle") DO UPDATE SET "accepted" = EXCLUDED."accepted", "pending" = NULL, "pending_card" = NULL, "rejected_digest" = NULL,
         "last_refresh_at" = now(), "last_refresh_error" = NULL, "updated_at" = now()`,
      [handle, JSON.stringify(accepted)],
    );
  }

  async status(handle: string): Promise<UpstreamStatusView> {
    const agent = await this.upstreamAgent(handle);
    return this.statusOf(agent.handle, agent.upstream as UpstreamInterface, await this.row(agent.handle));
  }

  /** Reads the agent's card now and compares it with the accepted one. */
  async refresh(handle: string): Promise<UpstreamRefreshReply> {
    const agent = await this.upstreamAgent(handle);
    const upstream = agent.upstream as UpstreamInterface;
    const row = await this.row(agent.handle);
    let read: UpstreamCardSnapshot;
    try {
      read = snapshotOf(await this.readCard(agent.handle, upstream.card_url));
    } catch (error) {
      if (!(error instanceof CardReadError)) throw error;
      await this.dataSource.query(
        `INSERT INTO "notifier"."upstream_agents" ("handle", "last_refresh_at", "last_refresh_error") VALUES ($1, now(), $2)
         ON CONFLICT ("handle") DO UPDATE SET "last_refresh_at" = now(), "last_refresh_error" = EXCLUDED."last_refresh_error", "updated_at" = now()`,
        [agent.handle, error.message],
      );
      this.logger.warn({ handle: agent.handle, error: error.message }, 'upstream agent card refresh failed: the accepted card stays');
      return this.refreshReply(agent.handle, upstream, 'failed', [], error.message);
    }
    const accepted = row?.accepted ?? this.baselineOf(agent, upstream, read);
    const diff = diffCards(accepted, read);
    const fetchedAt = new Date().toISOString();
    let current = upstream;
    if (diff.harmless.length > 0) {
      const profile: Record<string, unknown> = {};
      for (const change of diff.harmless) profile[change.field] = change.new;
      current = { ...upstream, card_fetched_at: fetchedAt };
      await this.rpc.request(DIRECTORY_SUBJECTS.putUpstream, { handle: agent.handle, upstream: current, ...profile });
    }
    let outcome: UpstreamRefreshOutcome = diff.harmless.length > 0 ? 'applied' : 'unchanged';
    let pending: UpstreamPendingChange | null = null;
    let rejectedDigest: string | null = null;
    if (diff.review.length > 0) {
      const digest = digestOf(diff.review);
      if (digest === row?.rejected_digest) {
        outcome = 'rejected_before';
        rejectedDigest = digest;
      } else {
        const samePending = row?.pending ? digestOf(row.pending.changes) === digest : false;
        pending = {
          detected_at: samePending ? (row?.pending as UpstreamPendingChange).detected_at : fetchedAt,
          card_fetched_at: fetchedAt,
          changes: diff.review,
        };
        rejectedDigest = row?.rejected_digest ?? null;
        outcome = 'pending';
        if (!samePending)
          this.logger.warn(
            { handle: agent.handle, fields: diff.review.map((change) => change.field), changes: diff.review },
            'upstream agent card changed: the change waits for an operator (deliveries go on against the accepted card)',
          );
      }
    }
    await this.dataSource.query(
      `INSERT INTO "notifier"."upstream_agents" ("handle", "accepted", "pending", "pending_card", "rejected_digest", "last_refresh_at", "last_refresh_error")
       VALUES ($1, $2, $3, $4, $5, now(), NULL)
       ON CONFLICT ("handle") DO UPDATE SET "accepted" = EXCLUDED."accepted", "pending" = EXCLUDED."pending", "pending_card" = EXCLUDED."pending_card",
         "rejected_digest" = EXCLUDED."rejected_digest", "last_refresh_at" = now(), "last_refresh_error" = NULL, "updated_at" = now()`,
      [
        agent.handle,
        JSON.stringify(withChanges(accepted, diff.harmless)),
        pending ? JSON.stringify(pending) : null,
        pending ? JSON.stringify(read) : null,
        rejectedDigest,
      ],
    );
    if (diff.harmless.length > 0)
      this.logger.log({ handle: agent.handle, fields: diff.harmless.map((change) => change.field) }, 'upstream agent card profile refreshed');
    return this.refreshReply(agent.handle, current, outcome, diff.changes, null);
  }

  /**
   * Records an operator's acceptance of the pending change, once the directory's interface (what
   * deliveries use) is the one the change makes: the edge writes that through the directory's
   * operator-only subject first, so nothing the notifier may publish moves where the relay delivers.
   */
  async accept(handle: string): Promise<UpstreamChangeDecisionReply> {
    const agent = await this.upstreamAgent(handle);
    const row = await this.row(agent.handle);
    if (!row?.pending) throw new RelayError('no_pending_change', `The card of ${agent.handle} has no change waiting for review`);
    const upstream = agent.upstream as UpstreamInterface;
    const accepted = withChanges(row.accepted ?? this.baselineOf(agent, upstream, null), row.pending.changes);
    try {
      checkWebhookUrl(accepted.url, upstreamPrivateTargets(this.config));
    } catch (error) {
      throw new RelayError('invalid_params', `upstream.url: the card's new interface ${accepted.url} is refused: ${(error as Error).message}`, {
        field: 'upstream.url',
      });
    }
    const next = interfaceOf(upstream, accepted, row.pending.card_fetched_at);
    if (!sameInterface(upstream, next)) {
      throw new RelayError(
        'state_changed',
        `The directory does not deliver ${agent.handle}'s handoffs to the pending change's interface yet: accept it again`,
        {
          handle: agent.handle,
        },
      );
    }
    await this.dataSource.query(
      `UPDATE "notifier"."upstream_agents" SET "accepted" = $2, "pending" = NULL, "pending_card" = NULL, "rejected_digest" = NULL, "updated_at" = now() WHERE "handle" = $1`,
      [agent.handle, JSON.stringify(accepted)],
    );
    this.logger.log({ handle: agent.handle, changes: row.pending.changes }, 'upstream agent card change accepted: deliveries use the new card');
    return { ...(await this.statusOf(agent.handle, next, await this.row(agent.handle))), decided: row.pending };
  }

  /** An operator rejects the pending change: the accepted card stays, and a refresh that reads the same change does not propose it again. */
  async reject(handle: string): Promise<UpstreamChangeDecisionReply> {
    const agent = await this.upstreamAgent(handle);
    const row = await this.row(agent.handle);
    if (!row?.pending) throw new RelayError('no_pending_change', `The card of ${agent.handle} has no change waiting for review`);
    await this.dataSource.query(
      `UPDATE "notifier"."upstream_agents" SET "pending" = NULL, "pending_card" = NULL, "rejected_digest" = $2, "updated_at" = now() WHERE "handle" = $1`,
      [agent.handle, digestOf(row.pending.changes)],
    );
    this.logger.log({ handle: agent.handle, changes: row.pending.changes }, 'upstream agent card change rejected: the accepted card stays');
    return { ...(await this.statusOf(agent.handle, agent.upstream as UpstreamInterface, await this.row(agent.handle))), decided: row.pending };
  }

  /**
   * One scheduled round: the replica holding the lock refreshes the cards not read for
   * RELAY_UPSTREAM_CARD_REFRESH_MS, ROUND_CONCURRENCY at a time, each within REFRESH_DEADLINE_MS (a
   * card that drips or hangs holds one place for that long, never the round), starting none after
   * ROUND_DEADLINE_MS.
   */
  async refreshDue(): Promise<number | undefined> {
    try {
      return await withTryAdvisoryLock(pgPoolOf(this.dataSource), REFRESH_LOCK, async () => {
        const due = (await this.dataSource.query(
          `SELECT "t"."handle" FROM "notifier"."agent_targets" "t" LEFT JOIN "notifier"."upstream_agents" "u" ON "u"."handle" = "t"."handle"
           WHERE "t"."upstream" IS NOT NULL AND NOT "t"."disabled"
             AND ("u"."last_refresh_at" IS NULL OR "u"."last_refresh_at" < now() - make_interval(secs => $1::integer / 1000.0))
           ORDER BY "u"."last_refresh_at" NULLS FIRST LIMIT $2`,
          [this.config.RELAY_UPSTREAM_CARD_REFRESH_MS, ROUND_SIZE],
        )) as Array<{ handle: string }>;
        const startedAt = Date.now();
        const queue = due.map((row) => row.handle);
        const refreshNext = async (): Promise<void> => {
          for (let handle = queue.shift(); handle !== undefined; handle = queue.shift()) {
            if (this.stopping || Date.now() - startedAt > ROUND_DEADLINE_MS) return;
            await withDeadline(this.refresh(handle), REFRESH_DEADLINE_MS).catch((error: unknown) =>
              this.logger.warn({ err: error, handle }, 'could not refresh the upstream agent card'),
            );
          }
        };
        await Promise.all(Array.from({ length: Math.min(ROUND_CONCURRENCY, due.length) }, refreshNext));
        return due.length;
      });
    } catch (error) {
      this.logger.warn({ err: error }, 'could not refresh upstream agent cards');
      return undefined;
    }
  }

  private async upstreamAgent(handle: string): Promise<AgentRecord> {
    const agent = await this.directory.agent(handle);
    if (!agent) throw new RelayError('agent_not_found', `No agent with the handle ${handle}`);
    if (!agent.upstream)
      throw new RelayError('invalid_params', `handle: ${agent.handle} is not an upstream agent (it was registered without upstream)`, { field: 'handle' });
    return agent;
  }

  /**
   * The accepted card of an agent registered before the relay kept cards: the directory's
   * interface and profile; its security is taken as first read (nothing to compare it with).
   */
  private baselineOf(agent: AgentRecord, upstream: UpstreamInterface, read: UpstreamCardSnapshot | null): UpstreamCardSnapshot {
    return {
      url: upstream.url,
      binding: upstream.binding,
      protocol_version: upstream.protocol_version,
      streaming: upstream.streaming,
      push_notifications: upstream.push_notifications,
      security: read?.security ?? null,
      name: agent.name,
      description: agent.description,
      skills: agent.skills,
    };
  }

  private async row(handle: string): Promise<CardRow | null> {
    const rows = (await this.dataSource.query(
      `SELECT "accepted", "pending", "rejected_digest", "last_refresh_at", "last_refresh_error", "last_success_at", "last_failure_at", "last_failure_method", "last_failure_reason"
       FROM "notifier"."upstream_agents" WHERE "handle" = $1`,
      [handle],
    )) as CardRow[];
    return rows[0] ?? null;
  }

  private async refreshReply(
    handle: string,
    upstream: UpstreamInterface,
    outcome: UpstreamRefreshOutcome,
    changes: UpstreamCardChange[],
    error: string | null,
  ): Promise<UpstreamRefreshReply> {
    return { ...(await this.statusOf(handle, upstream, await this.row(handle))), refresh: { outcome, changes, error } };
  }

  private async statusOf(handle: string, upstream: UpstreamInterface, row: CardRow | null): Promise<UpstreamStatusView> {
    return {
      handle,
      upstream,
      card: {
        last_refresh_at: iso(row?.last_refresh_at ?? null),
        last_refresh_error: row?.last_refresh_error ?? null,
        pending_change: row?.pending ?? null,
        pending_upstream:
          row?.pending && row.accepted ? interfaceOf(upstream, withChanges(row.accepted, row.pending.changes), row.pending.card_fetched_at) : null,
      },
      tls: await this.tls.info(handle),
      health: {
        last_success_at: iso(row?.last_success_at ?? null),
        last_failure_at: iso(row?.last_failure_at ?? null),
        last_failure_method: row?.last_failure_method ?? null,
        last_failure_reason: row?.last_failure_reason ?? null,
        breaker: this.health.breakerFor(upstream.url),
      },
    };
  }
}

/** `work`, or a rejection once `ms` passed without it settling (the work itself goes on, held to its own deadlines). */
function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`not done within ${ms} ms: the round goes on without it`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
