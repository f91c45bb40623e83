import { jest } from '@jest/globals';
import { HeldWrites } from './held-writes';

/** A store whose writes are recorded, and fail while `failing` is set. */
function store(): { written: number[][]; failing: { on: boolean }; failures: number[]; writes: HeldWrites<number> } {
  const written: number[][] = [];
  const failing = { on: false };
  const failures: number[] = [];
  const writes = new HeldWrites<number>(
    async (items) => {
      if (failing.on) throw new Error('database away');
      written.push(items);
    },
    { delayMs: 200, maxHeld: 5, onWriteFailed: (_error, items) => failures.push(items) },
  );
  return { written, failing, failures, writes };
}

describe('HeldWrites', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('writes what came within the delay together, in the order it came, once the delay has passed', async () => {
    const { written, writes } = store();
    writes.add(1);
    await jest.advanceTimersByTimeAsync(150);
    writes.add(2);
    expect(written).toEqual([]);
    // The delay counts from the first item held: the second does not push it back.
    await jest.advanceTimersByTimeAsync(50);
    expect(written).toEqual([[1, 2]]);
    writes.add(3);
    await jest.advanceTimersByTimeAsync(200);
    expect(written).toEqual([[1, 2], [3]]);
  });

  it('writes at once when as many as it holds at most came', async () => {
    const { written, writes } = store();
    for (const item of [1, 2, 3, 4, 5]) writes.add(item);
    await jest.advanceTimersByTimeAsync(0);
    expect(written).toEqual([[1, 2, 3, 4, 5]]);
  });

  it('keeps what a failed write could not store for the next, dropping the oldest beyond its bound', async () => {
    const { written, failing, failures, writes } = store();
    failing.on = true;
    writes.add(1);
    writes.add(2);
    await jest.advanceTimersByTimeAsync(200);
    expect(failures).toEqual([2]);
    for (const item of [3, 4, 5]) writes.add(item);
    // Full: written at once, failing again; the oldest go past the bound of 5.
    writes.add(6);
    await jest.advanceTimersByTimeAsync(0);
    expect(writes.dropped).toBe(1);
    failing.on = false;
    await jest.advanceTimersByTimeAsync(1000);
    expect(written).toEqual([[2, 3, 4, 5, 6]]);
  });

  it('writes what it holds when closed, and takes nothing after', async () => {
    const { written, writes } = store();
    writes.add(1);
    await writes.close();
    expect(written).toEqual([[1]]);
    writes.add(2);
    await jest.advanceTimersByTimeAsync(1000);
    expect(written).toEqual([[1]]);
  });
});
