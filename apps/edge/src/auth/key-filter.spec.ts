import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { JetStreamApiError } from '@nats-io/jetstream';
import type { KV, KvWatchEntry } from '@nats-io/kv';
import type { NatsRpcClient } from '@app/messaging';
import { keyFilterDigestOfKey } from '@app/messaging';
import type { HttpMetrics } from '@app/metrics';
import { eventually } from '../../../../test/support/eventually';
import { KeyFilter } from './key-filter';

const KEY_A = `ah_live_${'A'.repeat(32)}`;
const KEY_B = `ah_live_${'B'.repeat(32)}`;
const KEY_C = `ah_live_${'C'.repeat(32)}`;

/** A watch whose entries the test pushes, ended by `stop()` like the client's. */
class ScriptedWatch implements AsyncIterable<KvWatchEntry> {
  private readonly queue: KvWatchEntry[] = [];
  private wake?: () => void;
  stopped = false;

  push(entry: Partial<KvWatchEntry>): void {
    this.queue.push(entry as KvWatchEntry);
    this.wake?.();
  }

  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<KvWatchEntry> {
    while (!this.stopped) {
      const entry = this.queue.shift();
      if (entry) yield entry;
      else await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

function put(apiKey: string, delta: number, isUpdate = false): Partial<KvWatchEntry> {
  return { key: keyFilterDigestOfKey(apiKey), operation: 'PUT', delta, isUpdate };
}

/** What the filter shows in its metrics, read as a scrape would. */
class MetricsReader {
  read: () => { loaded: boolean; digests: number } = () => ({ loaded: false, digests: 0 });

  watchKeyFilter(read: () => { loaded: boolean; digests: number }): void {
    this.read = read;
  }
}

/** A KeyFilter over a scripted bucket holding `values` entries (or none that can be read). */
class ScriptedKeyFilter extends KeyFilter {
  readonly watchOf = new ScriptedWatch();

  constructor(
    private readonly values: number | Error,
    protected override readonly maxDigests = 1_000_000,
    private readonly metrics = new MetricsReader(),
  ) {
    super({} as NatsRpcClient, metrics as unknown as HttpMetrics);
  }

  get published(): { loaded: boolean; digests: number } {
    return this.metrics.read();
  }

  protected override openBucket(): Promise<KV> {
    if (this.values instanceof Error) return Promise.reject(this.values);
    const values = this.values;
    return Promise.resolve({
      status: async () => ({ values, streamInfo: { created: '2026-01-01T00:00:00Z' } }),
      watch: async () => this.watchOf,
    } as unknown as KV);
  }
}

describe('KeyFilter', () => {
  const filters: KeyFilter[] = [];
  function start(filter: ScriptedKeyFilter): ScriptedKeyFilter {
    filters.push(filter);
    filter.onApplicationBootstrap();
    return filter;
  }

  afterEach(async () => {
    await Promise.all(filters.splice(0).map((filter) => filter.onModuleDestroy()));
  });

  it('answers unknown until the initial values are in, then follows puts and deletes', async () => {
    const filter = start(new ScriptedKeyFilter(2));
    filter.watchOf.push(put(KEY_A, 1));
    await eventually(() => expect(filter.published.digests).toBe(1));
    expect(filter.verdict(KEY_A)).toBe('unknown');
    filter.watchOf.push(put(KEY_B, 0));
    await eventually(() => expect(filter.isLoaded).toBe(true));
    expect(filter.published).toEqual({ loaded: true, digests: 2 });
    expect(filter.verdict(KEY_A)).toBe('listed');
    expect(filter.verdict(KEY_C)).toBe('unlisted');
    // Not an agent key at all: never listed.
    expect(filter.verdict('admin-token-0123456789abcdef')).toBe('unknown');

    filter.watchOf.push({ key: keyFilterDigestOfKey(KEY_A), operation: 'DEL', delta: 0, isUpdate: true });
    filter.watchOf.push(put(KEY_C, 0, true));
    await eventually(() => expect(filter.verdict(KEY_C)).toBe('listed'));
    expect(filter.verdict(KEY_A)).toBe('unlisted');
  });

  it('is loaded at once over an empty bucket, and lists a key this edge saw issued before the bucket tells it', async () => {
    const filter = start(new ScriptedKeyFilter(0));
    await eventually(() => expect(filter.isLoaded).toBe(true));
    expect(filter.verdict(KEY_A)).toBe('unlisted');
    filter.remember(KEY_A);
    expect(filter.verdict(KEY_A)).toBe('listed');
  });

  it('gives up past its bound: unknown, nothing held, the watch stopped', async () => {
    const filter = start(new ScriptedKeyFilter(3, 2));
    filter.watchOf.push(put(KEY_A, 2));
    filter.watchOf.push(put(KEY_B, 1));
    await eventually(() => expect(filter.published.digests).toBe(2));
    filter.watchOf.push(put(KEY_C, 0));
    await eventually(() => expect(filter.watchOf.stopped).toBe(true));
    await eventually(() => expect(filter.published).toEqual({ loaded: false, digests: 0 }));
    expect(filter.verdict(KEY_A)).toBe('unknown');
  });

  it('answers unknown while the bucket cannot be read', async () => {
    const filter = start(new ScriptedKeyFilter(new Error('stream not found')));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(filter.isLoaded).toBe(false);
    expect(filter.verdict(KEY_A)).toBe('unknown');
  });

  it('says in one info line, without a stack, that the bucket is not made yet; other problems stay warnings with their error', async () => {
    const info = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      start(new ScriptedKeyFilter(new JetStreamApiError({ err_code: 10059, code: 404, description: 'stream not found' })));
      await eventually(() => expect(info).toHaveBeenCalledTimes(1));
      expect(info.mock.calls[0]).toEqual([expect.stringMatching(/^key filter bucket not made yet \(the directory makes it as it starts\)/)]);
      expect(warn).not.toHaveBeenCalled();
      const broken = new Error('timeout');
      start(new ScriptedKeyFilter(broken));
      await eventually(() => expect(warn).toHaveBeenCalledWith({ err: broken }, expect.stringContaining('key filter bucket not readable')));
    } finally {
      info.mockRestore();
      warn.mockRestore();
    }
  });
});
