import { RelayClientError } from './relay-client-error';
import { retryTransient } from './transient-retry';

const unreachable = (): RelayClientError => new RelayClientError('unreachable', 'unreachable', 'connection refused');
const rateLimited = (retryAfterSeconds: number): RelayClientError =>
  new RelayClientError('relay_error', 'rate_limited', 'Rate limit exceeded', { code: -32003, httpStatus: 429, retryAfterSeconds });

/** A call that fails with `failures` in turn, then answers `'done'`. */
function failingCall(failures: Error[]): { call: () => Promise<string>; count: () => number } {
  let calls = 0;
  return {
    call: async () => {
      const failure = failures[calls++];
      if (failure) throw failure;
      return 'done';
    },
    count: () => calls,
  };
}

describe('retryTransient', () => {
  const fast = { retries: 3, minDelayMs: 1, factor: 2, maxDelayMs: 4 };

  it('calls again after transient failures, with growing waits, and answers what the call answers', async () => {
    const { call, count } = failingCall([unreachable(), unreachable(), unreachable()]);
    const waits: number[] = [];
    await expect(retryTransient(call, { ...fast, onRetry: (_, waitMs) => waits.push(waitMs) })).resolves.toBe('done');
    expect(count()).toBe(4);
    expect(waits).toEqual([1, 2, 4]);
  });

  it('throws the last transient error once the retries are spent', async () => {
    const last = unreachable();
    const { call, count } = failingCall([unreachable(), unreachable(), last]);
    await expect(retryTransient(call, { ...fast, retries: 2 })).rejects.toBe(last);
    expect(count()).toBe(3);
  });

  it('throws any other error at once', async () => {
    const conflict = new RelayClientError('relay_error', 'thread_terminal', 'The task is in a terminal state', { code: -32007 });
    const bug = new TypeError('undefined is not a function');
    for (const error of [conflict, bug]) {
      const { call, count } = failingCall([error]);
      await expect(retryTransient(call, fast)).rejects.toBe(error);
      expect(count()).toBe(1);
    }
  });

  it('does not retry with no retries', async () => {
    const { call, count } = failingCall([unreachable()]);
    await expect(retryTransient(call, { ...fast, retries: 0 })).rejects.toMatchObject({ reason: 'unreachable' });
    expect(count()).toBe(1);
  });

  it("waits the relay's Retry-After when it is longer than the backoff", async () => {
    const { call, count } = failingCall([rateLimited(0.2)]);
    const waits: number[] = [];
    const started = performance.now();
    await expect(retryTransient(call, { ...fast, onRetry: (_, waitMs) => waits.push(waitMs) })).resolves.toBe('done');
    expect(waits).toEqual([200]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(count()).toBe(2);
  });

  it('gives the error back instead of waiting longer than maxRetryAfterMs', async () => {
    const { call, count } = failingCall([rateLimited(60)]);
    const waits: number[] = [];
    await expect(retryTransient(call, { ...fast, maxRetryAfterMs: 10_000, onRetry: (_, waitMs) => waits.push(waitMs) })).rejects.toMatchObject({
      reason: 'rate_limited',
    });
    expect(count()).toBe(1);
    expect(waits).toEqual([]);
  });
});
