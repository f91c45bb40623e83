import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ORG_SUBJECTS, RelayError, type StoredBytesRefusal } from '@app/contracts';
import { natsInboxPrefix, NatsRpcClient } from '@app/messaging';
import { OrgQuotaMetrics } from '@app/metrics';
import { TasksConfig } from '../../tasks.config';
import type { StoredBytesQuotas } from '../store/stored-bytes';

/** How long an org's quota read from the directory is used before it is read again (as the edge's directory cache). */
const QUOTA_CACHE_MS = 1000;
const MAX_CACHED_ORGS = 10_000;

/**
 * The orgs' stored-bytes quotas (docs/orgs.md#quotas), read from the directory and kept for a
 * second, so that a change applies within a second and a write of an org without a quota costs a
 * lookup in memory; concurrent misses of one org share one request. A refused write is counted in
 * `agentrelay_org_quota_rejections_total{org, quota="stored_bytes"}`.
 */
@Injectable()
export class OrgStoredBytesQuotas implements StoredBytesQuotas, OnModuleInit, OnApplicationShutdown {
  private client?: NatsRpcClient;
  private readonly cached = new Map<string, { limit: Promise<number | null>; expiresAt: number }>();

  constructor(
    @Inject(TasksConfig) private readonly config: TasksConfig,
    @Inject(OrgQuotaMetrics) private readonly metrics: OrgQuotaMetrics,
  ) {}

  async onModuleInit(): Promise<void> {
    this.client = await NatsRpcClient.connect({
      url: this.config.natsServers,
      inboxPrefix: natsInboxPrefix('tasks', this.config.NATS_SUBJECT_PREFIX),
      subjectPrefix: this.config.NATS_SUBJECT_PREFIX,
      defaultTimeoutMs: this.config.NATS_REQUEST_TIMEOUT_MS,
      name: 'agentrelay-tasks-org-quotas',
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client?.drain().catch(() => undefined);
  }

  limitOf(org: string): Promise<number | null> {
    const now = Date.now();
    const hit = this.cached.get(org);
    if (hit && hit.expiresAt > now) return hit.limit;
    const entry = { limit: this.load(org), expiresAt: now + QUOTA_CACHE_MS };
    this.cached.delete(org);
    this.cached.set(org, entry);
    if (this.cached.size > MAX_CACHED_ORGS) this.cached.delete(this.cached.keys().next().value as string);
    entry.limit.catch(() => {
      if (this.cached.get(org) === entry) this.cached.delete(org);
    });
    return entry.limit;
  }

  refused(refusal: StoredBytesRefusal): RelayError {
    this.metrics.rejected(refusal.org, refusal.quota);
    return new RelayError('org_quota_exceeded', `The org ${refusal.org} is at its quota of ${refusal.limit} stored bytes`, { ...refusal });
  }

  private async load(org: string): Promise<number | null> {
    const client = this.client;
    if (!client) throw new RelayError('service_unavailable', 'The tasks service is not connected to NATS', { service: 'directory' });
    return (await client.request(ORG_SUBJECTS.quotas, { name: org })).quotas.stored_bytes;
  }
}
