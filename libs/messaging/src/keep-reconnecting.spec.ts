import { keepReconnecting } from './keep-reconnecting';

interface Step {
  /** What the open does: fail with an error, or give a session that ends (throws, or returns) when used. */
  open: Error | 'session';
}

/**
 * Runs keepReconnecting over a script of opens; when the script is spent the next open waits for
 * the abort. Records every failure it is told of, and how many sessions were used.
 */
async function run(script: Step[], options: { minDelayMs: number; maxDelayMs: number }) {
  const controller = new AbortController();
  const told: Array<{ message: string; retryInMs: number }> = [];
  let opens = 0;
  let used = 0;
  let scriptDone!: () => void;
  const spent = new Promise<void>((resolve) => (scriptDone = resolve));
  const open = async (): Promise<number> => {
    const step = script[opens++];
    if (!step) {
      scriptDone();
      await new Promise<void>((resolve) => controller.signal.addEventListener('abort', () => resolve(), { once: true }));
      throw new Error('aborted');
    }
    if (step.open instanceof Error) throw step.open;
    return opens;
  };
  const use = async (): Promise<void> => {
    used += 1;
    throw new Error(`session ${used} ended`);
  };
  const loop = keepReconnecting(open, use, {
    ...options,
    signal: controller.signal,
    onInterrupted: (error, retryInMs) => told.push({ message: (error as Error).message, retryInMs }),
  });
  await spent;
  controller.abort();
  await loop;
  return { told, opens, used };
}

describe('keepReconnecting', () => {
  it('retries a failing open with doubling waits up to the max, then uses the session', async () => {
    const down = new Error('connection refused');
    const { told, used } = await run([{ open: down }, { open: down }, { open: down }, { open: down }, { open: 'session' }], { minDelayMs: 1, maxDelayMs: 4 });
    expect(told.slice(0, 4)).toEqual([
      { message: 'connection refused', retryInMs: 1 },
      { message: 'connection refused', retryInMs: 2 },
      { message: 'connection refused', retryInMs: 4 },
      { message: 'connection refused', retryInMs: 4 },
    ]);
    expect(used).toBe(1);
    expect(told[4]).toEqual({ message: 'session 1 ended', retryInMs: 1 });
  });

  it('starts the backoff over after a session that was open', async () => {
    const down = new Error('connection refused');
    const { told, used } = await run([{ open: down }, { open: down }, { open: 'session' }, { open: down }, { open: down }], { minDelayMs: 1, maxDelayMs: 100 });
    expect(told.map(({ retryInMs }) => retryInMs)).toEqual([1, 2, 1, 1, 2]);
    expect(used).toBe(1);
  });

  it('goes on after an open that fails with a TypeError, which p-retry does not retry itself', async () => {
    const bug = new TypeError('undefined is not a function');
    const { told, opens } = await run([{ open: bug }, { open: bug }, { open: 'session' }], { minDelayMs: 1, maxDelayMs: 4 });
    expect(told).toEqual([
      { message: 'undefined is not a function', retryInMs: 1 },
      { message: 'undefined is not a function', retryInMs: 1 },
      { message: 'session 1 ended', retryInMs: 1 },
    ]);
    expect(opens).toBe(4);
  });

  it('ends when the signal aborts during a wait, without waiting it out', async () => {
    const controller = new AbortController();
    let opens = 0;
    const loop = keepReconnecting(
      async () => {
        opens += 1;
        throw new Error('connection refused');
      },
      async () => undefined,
      // A wait far past the test's timeout, aborted once it has begun: the loop can only end by the abort.
      { signal: controller.signal, minDelayMs: 3_600_000, maxDelayMs: 3_600_000, onInterrupted: () => void setTimeout(() => controller.abort(), 20) },
    );
    await expect(loop).resolves.toBeUndefined();
    expect(opens).toBe(1);
  });

  it('ends, telling nothing, when a session ends because the signal aborted', async () => {
    const controller = new AbortController();
    const told: unknown[] = [];
    const loop = keepReconnecting(
      async () => 'session',
      () => new Promise<void>((resolve) => controller.signal.addEventListener('abort', () => resolve(), { once: true })),
      { signal: controller.signal, minDelayMs: 1, maxDelayMs: 4, onInterrupted: (error) => told.push(error) },
    );
    controller.abort();
    await expect(loop).resolves.toBeUndefined();
    expect(told).toEqual([]);
  });
});
