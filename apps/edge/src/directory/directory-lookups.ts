import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { createHash } from 'node:crypto';
import {
  DIRECTORY_CHANGES_SUBJECT,
  DIRECTORY_SUBJECTS,
  ORG_SUBJECTS,
  prefixedSubject,
  type AdmitReply,
  type AgentIdentity,
  type AgentProfile,
  type OrgQuotas,
} from '@app/contracts';
import { NatsRpcClient, PERMISSION_PROBE_HEADER } from '@app/messaging';
import { EdgeConfig } from '../edge.config';
import { ExpiringCache } from './expiring-cache';

/**
 * The directory's answers on the request path (who holds this API key, may this sender hand work
 * to that recipient, the profile behind an agent's endpoint), kept at most
 * `RELAY_DIRECTORY_CACHE_MS` (≤ 1 s) and dropped as soon as the directory announces a change, so a
 * revoked key, a disabled agent or a new block holds on every edge within a second.
 */
@Injectable()
export class DirectoryLookups implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(DirectoryLookups.name);
  private readonly identities: ExpiringCache<AgentIdentity>;
  private readonly admissions: ExpiringCache<AdmitReply>;
  private readonly profiles: ExpiringCache<AgentProfile>;
  private readonly orgQuotaCache: ExpiringCache<OrgQuotas>;
  private subscription?: Subscription;
  private readonly forgetListeners: Array<() => void> = [];

  constructor(
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(EdgeConfig) config: EdgeConfig,
  ) {
    const ttlMs = config.RELAY_DIRECTORY_CACHE_MS;
    this.identities = new ExpiringCache(ttlMs);
    this.admissions = new ExpiringCache(ttlMs);
    this.profiles = new ExpiringCache(ttlMs);
    this.orgQuotaCache = new ExpiringCache(ttlMs);
  }

  onModuleInit(): void {
    this.subscription = this.rpc.connection.subscribe(prefixedSubject(this.rpc.subjectPrefix, DIRECTORY_CHANGES_SUBJECT), {
      callback: (error, message) => {
        if (error) this.logger.warn({ err: error }, 'directory change subscription failed');
        else if (message.headers?.get(PERMISSION_PROBE_HEADER)) return;
        this.forget();
      },
    });
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
  }

  /** The agent holding a well-formed API key; the cache is keyed by the key's digest, never the key. */
  authenticate(apiKey: string): Promise<AgentIdentity> {
    const digest = createHash('sha256').update(apiKey).digest('base64');
    return this.identities.get(digest, () => this.rpc.request(DIRECTORY_SUBJECTS.authenticate, { api_key: apiKey }));
  }

  /** The agent a verified JWT names (its mapped subject or its handle claim), checked enabled at most a cache lifetime ago. */
  authenticateToken(issuer: string, subject: string, handle: string | undefined): Promise<AgentIdentity> {
    return this.identities.get(`token ${issuer} ${subject} ${handle ?? ''}`, () =>
      this.rpc.request(DIRECTORY_SUBJECTS.authenticateToken, { issuer, subject, ...(handle !== undefined ? { handle } : {}) }),
    );
  }

  /** The recipient's public profile and hold rules when its trust policy admits the sender (errors are never cached). */
  admit(senderHandle: string, recipientHandle: string): Promise<AdmitReply> {
    return this.admissions.get(`${senderHandle} ${recipientHandle}`, () =>
      this.rpc.request(DIRECTORY_SUBJECTS.admit, { sender: senderHandle, recipient: recipientHandle }),
    );
  }

  profile(handle: string): Promise<AgentProfile> {
    return this.profiles.get(handle, () => this.rpc.request(DIRECTORY_SUBJECTS.getProfile, { handle }));
  }

  /** An org's quotas (docs/orgs.md#quotas), for the caller gate. */
  orgQuotas(org: string): Promise<OrgQuotas> {
    return this.orgQuotaCache.get(org, async () => (await this.rpc.request(ORG_SUBJECTS.quotas, { name: org })).quotas);
  }

  /** Drops every cached answer (a directory change was announced, or this edge made one). */
  forget(): void {
    this.identities.clear();
    this.admissions.clear();
    this.profiles.clear();
    this.orgQuotaCache.clear();
    for (const listener of this.forgetListeners) listener();
  }

  /** Calls `listener` whenever the cached answers are dropped, for what other parts of the edge keep on them. */
  onForget(listener: () => void): void {
    this.forgetListeners.push(listener);
  }
}
