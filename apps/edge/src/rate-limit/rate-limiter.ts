import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { prefixedSubject } from '@app/contracts';
import { matchMaxBytes, matchReplicas, NatsRpcClient, RATE_LIMIT_SUBJECT_ROOT, rateLimitStreamName } from '@app/messaging';
import { HttpMetrics } from '@app/metrics';
import { EdgeConfig } from '../edge.config';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** Seconds until the current window ends (when the caller may try again). */
  retryAfterSeconds: number;
  /** Refused because the window is used up: this edge refuses every further call of it until `windowEndsAt`. */
  windowUsedUp: boolean;
  windowEndsAt: number;
}

const WINDOW_MS = 60_000;
/** A lease takes this share of what is left of an agent's window (at least one call). */
const LEASE_SHARE = 8;
const MAX_LEASE_ATTEMPTS = 8;
const STORE_TIMEOUT_MS = 2000;

/** One subject per agent per window; its last message is the count of calls leased so far. */
export function rateLimitSubject(subjectPrefix: string, agentId: string, window: number): string {
  return prefixedSubject(subjectPrefix, `${RATE_LIMIT_SUBJECT_ROOT}.${agentId.replace(/[^A-Za-z0-9_-]/g, '_')}.${window}`);
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
  /** The shared count and its stream sequence, as last seen (a compare-and-set starts from them). */
  leased?: { count: number; sequence: number };
  exhausted: boolean;
  /** The store could not be reached: this edge alone counts the window. */
  local: boolean;
  leasing?: Promise<boolean>;
}

/**
 * Fixed one-minute windows per agent, shared by every edge replica without a round trip per call.
 * Each edge leases calls in batches from a count kept per agent and window in a JetStream stream
 * (one message per subject, updated by compare-and-set on the subject's last sequence), then spends
 * them in process. A lease takes an eighth of what is left, so the shared count never passes the
 * limit and the last calls of a window are leased one by one, wherever they arrive. A lost stream
 * (a NATS restart) is created again; while the store is unreachable each edge counts the window on
 * its own (`failOpenDecisions` counts the calls it let through that way).
 */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger(RateLimiter.name);
  private readonly windows = new Map<string, AgentWindow>();
  private store?: Promise<{ js: JetStreamClient; jsm: JetStreamManager }>;
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

  /** Charges one call to `agentId`'s window (or another counter's, such as an org's, with its own `limit`). */
  async consume(agentId: string, now = Date.now(), limit = this.config.RELAY_RATE_LIMIT_PER_MINUTE): Promise<RateLimitDecision> {
    const window = Math.floor(now / WINDOW_MS);
    const windowEndsAt = (window + 1) * WINDOW_MS;
    const retryAfterSeconds = Math.max(1, Math.ceil((windowEndsAt - now) / 1000));
    const state = this.windowOf(agentId, window);
    for (;;) {
      if (state.tokens > 0) {
        state.tokens -= 1;
        if (state.local) {
          this.failOpen += 1;
          this.metrics.rateLimitFailedOpen();
        }
        return { allowed: true, limit, retryAfterSeconds, windowUsedUp: false, windowEndsAt };
      }
      if (state.exhausted) return { allowed: false, limit, retryAfterSeconds, windowUsedUp: true, windowEndsAt };
      state.leasing ??= this.lease(agentId, state, limit).finally(() => (state.leasing = undefined));
      if (!(await state.leasing) && state.tokens === 0) return { allowed: false, limit, retryAfterSeconds, windowUsedUp: false, windowEndsAt };
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
    const subject = rateLimitSubject(this.nats.subjectPrefix, agentId, state.window);
    let recreated = false;
    for (let attempt = 0; attempt < MAX_LEASE_ATTEMPTS; attempt++) {
      try {
        const { js, jsm } = await this.connect();
        state.leased ??= await this.readCount(jsm, subject);
        const take = leaseSize(limit - state.leased.count);
        if (take === 0) {
          state.exhausted = true;
          return true;
        }
        const count = state.leased.count + take;
        const ack = await js.publish(subject, String(count), { expect: { lastSubjectSequence: state.leased.sequence }, timeout: STORE_TIMEOUT_MS });
        state.leased = { count, sequence: ack.seq };
        state.tokens += take;
        return true;
      } catch (error) {
        state.leased = undefined;
        if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamWrongLastSequence) continue;
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

  private async readCount(jsm: JetStreamManager, subject: string): Promise<{ count: number; sequence: number }> {
    const last = await jsm.streams.getMessage(rateLimitStreamName(this.nats.subjectPrefix), { last_by_subj: subject });
    return last ? { count: Number.parseInt(last.string(), 10) || 0, sequence: last.seq } : { count: 0, sequence: 0 };
  }

  private connect(): Promise<{ js: JetStreamClient; jsm: JetStreamManager }> {
    this.store ??= this.ensureStream().catch((error: unknown) => {
      this.store = undefined;
      throw error;
    });
    return this.store;
  }

  private async ensureStream(): Promise<{ js: JetStreamClient; jsm: JetStreamManager }> {
    const jsm = await jetstreamManager(this.nats.connection, { timeout: STORE_TIMEOUT_MS });
    const name = rateLimitStreamName(this.nats.subjectPrefix);
    const config: Partial<StreamConfig> & { name: string } = {
      name,
      subjects: [prefixedSubject(this.nats.subjectPrefix, 'relay.ratelimit.>')],
      retention: RetentionPolicy.Limits,
      storage: StorageType.Memory,
      discard: DiscardPolicy.Old,
      max_msgs_per_subject: 1,
      max_age: nanos(2 * WINDOW_MS),
      max_bytes: this.config.RELAY_STATE_STREAM_MAX_BYTES,
      num_replicas: this.config.RELAY_JETSTREAM_REPLICAS,
    };
    const existing = await jsm.streams.info(name).catch(() => undefined);
    if (!existing) {
      await jsm.streams.add(config).catch(async (error: unknown) => {
        if (!(await jsm.streams.info(name).catch(() => undefined))) throw error;
      });
    } else if (existing.config.max_msgs_per_subject !== 1) {
      // Counters of an older layout (one message per call): start the windows over in this one.
      this.logger.warn(`rate-limit stream ${name} kept counts another way; created anew`);
      await jsm.streams.delete(name);
      await jsm.streams.add(config);
    } else {
      await matchReplicas(jsm, await matchMaxBytes(jsm, existing, config.max_bytes), config.num_replicas);
    }
    return { js: jetstream(this.nats.connection, { timeout: STORE_TIMEOUT_MS }), jsm };
  }
}
