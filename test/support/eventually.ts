import { inspect } from 'node:util';

/** Thrown when a probe is still failing at the deadline; the message tells what the last attempt saw. */
export class EventuallyTimeout extends Error {
  constructor(
    readonly attempts: number,
    readonly elapsedMs: number,
    readonly lastSeen: unknown,
  ) {
    super(`eventually: still failing after ${elapsedMs} ms and ${attempts} attempts; the last attempt saw:\n${describe(lastSeen)}`, { cause: lastSeen });
    this.name = 'EventuallyTimeout';
  }
}

/** What a probe that answered `false` leaves to report: nothing but the hint to assert instead. */
const ANSWERED_FALSE = new Error('the probe answered false, which cannot say what it saw: assert on what it read instead (e.g. expect(count).toBe(3))');

function describe(seen: unknown): string {
  if (seen instanceof Error) return seen.message;
  return inspect(seen, { depth: 6, breakLength: 120 });
}

/**
 * Polls `probe` until it returns, and returns what it returned. A probe says "not yet" by throwing
 * about what it read, best with a failed `expect(...)`, so that a timeout reports what the last
 * attempt saw. (A probe answering `false` is also "not yet", but then a timeout can only say so.)
 */
export async function eventually<T>(probe: () => Promise<T> | T, timeoutMs = 10000, intervalMs = 50): Promise<Exclude<T, false>> {
  const startedAt = Date.now();
  let attempts = 0;
  for (;;) {
    attempts++;
    let lastSeen: unknown;
    try {
      const result = await probe();
      if (result !== false) return result as Exclude<T, false>;
      lastSeen = ANSWERED_FALSE;
    } catch (error) {
      lastSeen = error;
    }
    const elapsedMs = Date.now() - startedAt;
    if (elapsedMs > timeoutMs) throw new EventuallyTimeout(attempts, elapsedMs, lastSeen);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
