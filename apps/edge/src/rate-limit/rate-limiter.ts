import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  DiscardPolicy,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type StreamConfig,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { prefixedSubject } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { HttpMetrics } from '@app/metrics';
import { EdgeConfig } from '../edge.config';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** Seconds until the current window ends (when the caller may try again). */
  retryAfterSeconds: number;
}

const WINDOW_MS = 60_000;
/** JetStream's error code when a subject already holds `max_msgs_per_subject` messages. */
const MAX_MESSAGES_PER_SUBJECT_EXCEEDED = 10077;
const EMPTY = new Uint8Array(0);

/** The counting stream of one relay (or test run): named after the subject prefix, so runs never share counters. */
export function rateLimitStreamName(subjectPrefix: string): string {
  const scope = subjectPrefix.replace(/[^A-Za-z0-9_-]/g, '_');
  return scope ? `RATELIMIT_${scope}` : 'RATELIMIT';
}

/** One subject per agent per window; the stream admits at most `limit` messages on it. */
export function rateLimitSubject(subjectPrefix: string, agentId: string, window: number): string {
  return prefixedSubject(subjectPrefix, `relay.ratelimit.${agentId.replace(/[^A-Za-z0-9_-]/g, '_')}.${window}`);
}

/**
 * Fixed one-minute windows per agent, shared by every edge replica. Each request publishes one
 * empty message on its agent's window subject to a JetStream stream that keeps at most `limit`
 * messages per subject and refuses new ones past that (`discard_new_per_subject`): the server
 * decides atomically, in one round trip, so concurrent requests on different edges never both take
 * the last slot. Windows expire with the stream's two-minute max age.
 */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger(RateLimiter.name);
  private client?: Promise<JetStreamClient>;

  constructor(
    @Inject(NatsRpcClient) private readonly nats: NatsRpcClient,
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
    @Inject(HttpMetrics) private readonly metrics: HttpMetrics,
  ) {}

  async consume(agentId: string, now = Date.now()): Promise<RateLimitDecision> {
    const limit = this.config.RELAY_RATE_LIMIT_PER_MINUTE;
    const window = Math.floor(now / WINDOW_MS);
    const retryAfterSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
    try {
      const js = await this.jetStream();
      await js.publish(rateLimitSubject(this.nats.subjectPrefix, agentId, window), EMPTY);
      return { allowed: true, limit, retryAfterSeconds };
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === MAX_MESSAGES_PER_SUBJECT_EXCEEDED) {
        return { allowed: false, limit, retryAfterSeconds };
      }
      this.logger.warn({ err: error }, 'rate-limit store unavailable; request let through');
      this.metrics.rateLimitFailedOpen();
      return { allowed: true, limit, retryAfterSeconds };
    }
  }

  private jetStream(): Promise<JetStreamClient> {
    this.client ??= this.ensureStream().catch((error: unknown) => {
      this.client = undefined;
      throw error;
    });
    return this.client;
  }

  private async ensureStream(): Promise<JetStreamClient> {
    const jsm = await jetstreamManager(this.nats.connection);
    const name = rateLimitStreamName(this.nats.subjectPrefix);
    const config: Partial<StreamConfig> & { name: string } = {
      name,
      subjects: [prefixedSubject(this.nats.subjectPrefix, 'relay.ratelimit.>')],
      retention: RetentionPolicy.Limits,
      storage: StorageType.Memory,
      discard: DiscardPolicy.New,
      discard_new_per_subject: true,
      max_msgs_per_subject: this.config.RELAY_RATE_LIMIT_PER_MINUTE,
      max_age: nanos(2 * WINDOW_MS),
      num_replicas: 1,
    };
    const existing = await jsm.streams.info(name).catch(() => undefined);
    if (!existing) {
      await jsm.streams.add(config).catch(async (error: unknown) => {
        if (!(await jsm.streams.info(name).catch(() => undefined))) throw error;
      });
    } else if (existing.config.max_msgs_per_subject !== config.max_msgs_per_subject) {
      this.logger.warn(`rate-limit stream ${name} had a limit of ${existing.config.max_msgs_per_subject}; now ${config.max_msgs_per_subject}`);
      await jsm.streams.update(name, { ...existing.config, max_msgs_per_subject: config.max_msgs_per_subject });
    }
    return jetstream(this.nats.connection);
  }
}
