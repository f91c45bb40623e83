import { Inject, Injectable, Logger } from '@nestjs/common';
import { JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { matchReplicas, NatsRpcClient } from '@app/messaging';
import { HttpMetrics } from '@app/metrics';
import { EdgeConfig } from '../edge.config';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** Seconds until the current window ends (when the caller may try again). */
  retryAfterSeconds: number;
}

const WINDOW_MS = 60_000;
/** A lease takes this share of what is left of an agent's window (at least one call). */
const LEASE_SHARE = 8;
const MAX_LEASE_ATTEMPTS = 8;
const STORE_TIMEOUT_MS = 2000;

/** The lease bucket of one relay (or test run): named after the subject prefix, so runs never share counters. */
export function rateLimitBucketName(subjectPrefix: string): string {
  const scope = subjectPrefix.replace(/[^A-Za-z0-9_-]/g, '_');
  return scope ? `RATELIMIT_${scope}` : 'RATELIMIT';
}

/** One key per agent per window; its value is the count of calls leased so far. */
export function rateLimitKey(agentId: string, window: number): string {
  return `${agentId.replace(/[^A-Za-z0-9_-]/g, '_')}.${window}`;
}

/** How many calls the next lease takes when `remaining` are left in the window. */
export function leaseSize(remaining: number): number {
  return remaining <= 0 ? 0 : Math.max(1, Math.floor(remaining / LEASE_SHARE));
}

/** One agent's window as this edge sees it. */
interface AgentWindow {
  window: number;
  /** Calls this edge has leased and not spent yet. */
  tokens: number;
  /** The shared count and its revision, as last seen (a compare-and-set starts from them; revision 0: no count yet). */
  leased?: { count: number; revision: number };
  exhausted: boolean;
  /** The store could not be reached: this edge alone counts the window. */
  local: boolean;
  leasing?: Promise<boolean>;
}

function lostRace(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence || error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/**
 * Fixed one-minute windows per agent, shared by every edge replica without a round trip per call.
 * Each edge leases calls in batches from a count kept per agent and window in a key-value bucket
 * (history 1, entries age out after two windows; the first lease of a window creates the key, the
 * next ones update it by compare-and-set on its revision), then spends them in process. A lease
 * takes an eighth of what is left, so the shared count never passes the limit and the last calls
 * of a window are leased one by one, wherever they arrive. A lost bucket (a NATS restart) is
 * created again; while the store is unreachable each edge counts the window on its own
 * (`failOpenDecisions` counts the calls it let through that way).
 */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger(RateLimiter.name);
  private readonly windows = new Map<string, AgentWindow>();
  private store?: Promise<KV>;
  private failOpen = 0;

  constructor(
    @Inject(NatsRpcClient) private readonly nats: NatsRpcClient,
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
    @Inject(HttpMetrics) private readonly metrics: HttpMetrics,
  ) {}

  /** Calls let through while the shared count could not be reached. */
  get failOpenDecisions(): number {
    return this.failOpen;
  }

  async consume(agentId: string, now = Date.now()): Promise<RateLimitDecision> {
    const limit = this.config.RELAY_RATE_LIMIT_PER_MINUTE;
    const window = Math.floor(now / WINDOW_MS);
    const retryAfterSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
    const state = this.windowOf(agentId, window);
    for (;;) {
      if (state.tokens > 0) {
        state.tokens -= 1;
        if (state.local) {
          this.failOpen += 1;
          this.metrics.rateLimitFailedOpen();
        }
        return { allowed: true, limit, retryAfterSeconds };
      }
      if (state.exhausted) return { allowed: false, limit, retryAfterSeconds };
      state.leasing ??= this.lease(agentId, state, limit).finally(() => (state.leasing = undefined));
      if (!(await state.leasing) && state.tokens === 0) return { allowed: false, limit, retryAfterSeconds };
    }
  }

  private windowOf(agentId: string, window: number): AgentWindow {
    const current = this.windows.get(agentId);
    if (current && current.window === window) return current;
    if (current === undefined && this.windows.size > 0) this.dropEndedWindows(window);
    const fresh: AgentWindow = { window, tokens: 0, exhausted: false, local: false };
    this.windows.set(agentId, fresh);
    return fresh;
  }

  private dropEndedWindows(window: number): void {
    for (const [agentId, state] of this.windows) if (state.window < window && !state.leasing) this.windows.delete(agentId);
  }

  /** Leases calls for this edge; false when other edges kept winning the compare-and-set. */
  private async lease(agentId: string, state: AgentWindow, limit: number): Promise<boolean> {
    const key = rateLimitKey(agentId, state.window);
    let recreated = false;
    for (let attempt = 0; attempt < MAX_LEASE_ATTEMPTS; attempt++) {
      try {
        const bucket = await this.connect();
        state.leased ??= await this.readCount(bucket, key);
        const take = leaseSize(limit - state.leased.count);
        if (take === 0) {
          state.exhausted = true;
          return true;
        }
        const count = state.leased.count + take;
        const revision = state.leased.revision === 0 ? await bucket.create(key, String(count)) : await bucket.update(key, String(count), state.leased.revision);
        state.leased = { count, revision };
        state.tokens += take;
        return true;
      } catch (error) {
        state.leased = undefined;
        if (lostRace(error)) continue;
        if (!recreated) {
          recreated = true;
          this.store = undefined;
          continue;
        }
        this.logger.warn({ err: error, agent_id: agentId }, 'rate-limit store unreachable; this edge counts the window alone');
        state.local = true;
        state.tokens = limit;
        // The whole limit, once: the window is not leased again, so this edge refuses past it.
        state.exhausted = true;
        return true;
      }
    }
    this.logger.warn({ agent_id: agentId }, 'rate-limit lease lost every race to other edges; call refused');
    return false;
  }

  private async readCount(bucket: KV, key: string): Promise<{ count: number; revision: number }> {
    const entry = await bucket.get(key);
    return entry ? { count: Number.parseInt(entry.string(), 10) || 0, revision: entry.revision } : { count: 0, revision: 0 };
  }

  private connect(): Promise<KV> {
    this.store ??= this.ensureBucket().catch((error: unknown) => {
      this.store = undefined;
      throw error;
    });
    return this.store;
  }

  private async ensureBucket(): Promise<KV> {
    const name = rateLimitBucketName(this.nats.subjectPrefix);
    const replicas = this.config.RELAY_JETSTREAM_REPLICAS;
    const kvm = new Kvm(jetstream(this.nats.connection, { timeout: STORE_TIMEOUT_MS }));
    const bucket = await kvm.create(name, {
      history: 1,
      storage: StorageType.Memory,
      ttl: 2 * WINDOW_MS,
      replicas,
    });
    // A bucket made before RELAY_JETSTREAM_REPLICAS changed keeps its count: its stream is changed like the others.
    const jsm = await jetstreamManager(this.nats.connection, { timeout: STORE_TIMEOUT_MS });
    await matchReplicas(jsm, await jsm.streams.info(`KV_${name}`), replicas);
    return bucket;
  }
}
