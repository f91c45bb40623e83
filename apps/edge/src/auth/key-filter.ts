import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { KV, KvWatchEntry } from '@nats-io/kv';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { QueuedIterator } from '@nats-io/transport-node';
import { API_KEY_PATTERN } from '@app/contracts';
import { KEY_FILTER_DIGEST_HEX, keyFilterDigestOfKey, NatsRpcClient, openKeyFilterBucket, WakeableDelay } from '@app/messaging';
import { HttpMetrics } from '@app/metrics';

/** Whether a presented key could be live: `unknown` while the edge does not hold the whole list. */
export type KeyFilterVerdict = 'listed' | 'unlisted' | 'unknown';

/** Digests held at most (64-bit each, about 45 MB for a million); past it the filter gives up until `OVERFLOW_RETRY_MS`. */
export const MAX_KEY_FILTER_DIGESTS = 1_000_000;

const STORE_TIMEOUT_MS = 2000;
/** The pause before following the bucket again after it could not be read or its watch ended. */
const RETRY_MS = 2000;
const OVERFLOW_RETRY_MS = 10 * 60_000;
/** How often the followed bucket is checked to be the same one (a bucket deleted and created again is read anew). */
const CHECK_INTERVAL_MS = 30_000;

const DIGEST_FORMAT = new RegExp(`^[0-9a-f]{${KEY_FILTER_DIGEST_HEX}}$`);

function digestValue(hex: string): bigint | undefined {
  return DIGEST_FORMAT.test(hex) ? BigInt(`0x${hex}`) : undefined;
}

/**
 * The edge's copy of the key filter bucket, which the directory keeps listing a 64-bit digest of
 * every live API key: initial values, then every put and delete, in memory. It tells the failure
 * throttle whether a key presented from an address past its budget could be valid, without asking
 * the directory. Until the initial values are in, while the bucket cannot be read, and past
 * `MAX_KEY_FILTER_DIGESTS`, the verdict is `unknown` and the throttle does what it did without the
 * filter. Shown by `agentrelay_key_filter_loaded` and `agentrelay_key_filter_digests`.
 */
@Injectable()
export class KeyFilter implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(KeyFilter.name);
  private readonly digests = new Set<bigint>();
  private loaded = false;
  private stopped = false;
  private watch?: QueuedIterator<KvWatchEntry>;
  private readonly pause = new WakeableDelay();
  private following?: Promise<void>;
  private lastProblem?: string;
  /** Digests held at most (a test lowers it). */
  protected readonly maxDigests: number = MAX_KEY_FILTER_DIGESTS;

  constructor(
    @Inject(NatsRpcClient) private readonly nats: NatsRpcClient,
    @Inject(HttpMetrics) metrics: HttpMetrics,
  ) {
    metrics.watchKeyFilter(() => ({ loaded: this.loaded, digests: this.digests.size }));
  }

  onApplicationBootstrap(): void {
    this.following = this.follow();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    this.watch?.stop();
    this.pause.interrupt();
    await this.following;
  }

  /** True once the bucket's initial values are in and the edge follows its changes. */
  get isLoaded(): boolean {
    return this.loaded;
  }

  verdict(apiKey: string): KeyFilterVerdict {
    if (!this.loaded || !API_KEY_PATTERN.test(apiKey)) return 'unknown';
    return this.digests.has(BigInt(`0x${keyFilterDigestOfKey(apiKey)}`)) ? 'listed' : 'unlisted';
  }

  /** A key this edge saw issued (its admin API relayed the directory's answer): listed now, before the bucket's update arrives. */
  remember(apiKey: string): void {
    if (API_KEY_PATTERN.test(apiKey) && this.digests.size < this.maxDigests) this.digests.add(BigInt(`0x${keyFilterDigestOfKey(apiKey)}`));
  }

  private async follow(): Promise<void> {
    while (!this.stopped) {
      let pauseMs = RETRY_MS;
      try {
        pauseMs = await this.followOnce();
      } catch (error) {
        const problem = error instanceof Error ? error.message : String(error);
        if (problem !== this.lastProblem) {
          // On a new NATS the directory makes the bucket as it starts: an edge that starts first waits for it, which is no fault.
          if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)
            this.logger.log('key filter bucket not made yet (the directory makes it as it starts); keys are throttled as without it until it is');
          else this.logger.warn({ err: error }, 'key filter bucket not readable; keys are throttled as without it until it is');
        }
        this.lastProblem = problem;
      }
      this.loaded = false;
      this.digests.clear();
      if (!this.stopped) await this.pause.wait(pauseMs, false);
    }
  }

  /** Follows the bucket until its watch ends, it is replaced, or it lists too many keys; returns the pause before the next try. */
  private async followOnce(): Promise<number> {
    const bucket = await this.openBucket();
    const status = await bucket.status();
    const watch = await bucket.watch();
    this.watch = watch;
    if (this.stopped) watch.stop();
    // An empty bucket has no initial values to wait for; a put that lands meanwhile comes through the watch.
    if (status.values === 0) this.markLoaded();
    const check = setInterval(() => void this.stopIfReplaced(bucket, status.streamInfo.created, watch), CHECK_INTERVAL_MS);
    check.unref();
    try {
      for await (const entry of watch) {
        const digest = digestValue(entry.key);
        if (digest === undefined) continue;
        if (entry.operation !== 'PUT') this.digests.delete(digest);
        else if (this.digests.size < this.maxDigests || this.digests.has(digest)) this.digests.add(digest);
        else {
          this.logger.warn(
            { limit: this.maxDigests },
            'key filter bucket lists more keys than this edge holds; keys are throttled as without it, trying again later',
          );
          watch.stop();
          return OVERFLOW_RETRY_MS;
        }
        if (!this.loaded && (entry.isUpdate || entry.delta === 0)) this.markLoaded();
      }
    } finally {
      clearInterval(check);
      this.watch = undefined;
    }
    return RETRY_MS;
  }

  protected openBucket(): Promise<KV> {
    return openKeyFilterBucket(this.nats.connection, this.nats.subjectPrefix, { create: false, timeoutMs: STORE_TIMEOUT_MS });
  }

  private markLoaded(): void {
    this.loaded = true;
    if (this.lastProblem !== undefined) this.logger.log('key filter bucket readable again');
    this.lastProblem = undefined;
  }

  private async stopIfReplaced(bucket: KV, created: string, watch: QueuedIterator<KvWatchEntry>): Promise<void> {
    try {
      if ((await bucket.status()).streamInfo.created === created) return;
    } catch {
      // Unreadable: follow it again from the start.
    }
    watch.stop();
  }
}
