import { Inject, Injectable, Logger } from '@nestjs/common';
import { Kvm, type KV } from '@nats-io/kv';
import { NatsRpcClient } from '@app/messaging';
import { EdgeConfig } from '../edge.config';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current window ends (when the caller may try again). */
  retryAfterSeconds: number;
}

const WINDOW_MS = 60_000;
const MAX_ATTEMPTS = 25;

/** The KV bucket of one relay (or test run): named after the subject prefix, so runs never share counters. */
export function rateLimitBucketName(subjectPrefix: string): string {
  const scope = subjectPrefix.replace(/[^A-Za-z0-9_-]/g, '_');
  return scope ? `ratelimit_${scope}` : 'ratelimit';
}

/**
 * Fixed one-minute windows per agent, counted in a NATS JetStream key-value bucket shared by every
 * edge replica. Each count is a compare-and-set on the key's revision, so concurrent requests on
 * different edges never both take the last slot.
 */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger(RateLimiter.name);
  private bucket?: Promise<KV>;

  constructor(
    @Inject(NatsRpcClient) private readonly nats: NatsRpcClient,
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
  ) {}

  async consume(agentId: string, now = Date.now()): Promise<RateLimitDecision> {
    const limit = this.config.RELAY_RATE_LIMIT_PER_MINUTE;
    const window = Math.floor(now / WINDOW_MS);
    const retryAfterSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
    const key = `${agentId.replace(/[^A-Za-z0-9_-]/g, '_')}.${window}`;
    let kv: KV;
    try {
      kv = await this.kv();
    } catch (error) {
      this.logger.warn({ err: error }, 'rate-limit store unavailable; request let through');
      return { allowed: true, limit, remaining: limit, retryAfterSeconds };
    }
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const entry = await kv.get(key);
      const current = entry && entry.operation === 'PUT' ? Number(entry.string()) || 0 : 0;
      if (current >= limit) return { allowed: false, limit, remaining: 0, retryAfterSeconds };
      try {
        if (entry) await kv.update(key, String(current + 1), entry.revision);
        else await kv.create(key, String(current + 1));
        return { allowed: true, limit, remaining: limit - current - 1, retryAfterSeconds };
      } catch {
        // another edge counted first: read again
      }
    }
    this.logger.warn({ agent_id: agentId }, 'rate-limit counter kept conflicting; request refused');
    return { allowed: false, limit, remaining: 0, retryAfterSeconds: 1 };
  }

  private kv(): Promise<KV> {
    const kvm = new Kvm(this.nats.connection);
    const name = rateLimitBucketName(this.nats.subjectPrefix);
    // An existing bucket made with other settings is used as it is.
    this.bucket ??= kvm
      .create(name, { history: 1, ttl: 2 * WINDOW_MS })
      .catch(() => kvm.open(name))
      .catch((error: unknown) => {
        this.bucket = undefined;
        throw error;
      });
    return this.bucket;
  }
}
