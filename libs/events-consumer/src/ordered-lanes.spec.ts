import { eventually } from '../../../test/support/eventually';
import { OrderedLanes } from './ordered-lanes';
import { RecentIds } from './recent-ids';

describe('OrderedLanes', () => {
  it('handles each key’s items in order, several keys at once, never more than the concurrency', async () => {
    const seen = new Map<string, number[]>();
    let running = 0;
    let most = 0;
    const lanes = new OrderedLanes<number>({ concurrency: 4, capacity: 1000 }, async (key, item) => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
      seen.set(key, [...(seen.get(key) ?? []), item]);
      running--;
    });
    for (let item = 0; item < 50; item++) for (const key of ['a', 'b', 'c', 'd', 'e', 'f']) await lanes.push(key, item);
    await lanes.idle();
    for (const key of ['a', 'b', 'c', 'd', 'e', 'f']) expect(seen.get(key)).toEqual(Array.from({ length: 50 }, (_, index) => index));
    expect(most).toBe(4);
    expect(lanes.size).toBe(0);
  });

  it('makes push wait while `capacity` items are held (backpressure), and lets one key take turns with the others', async () => {
    const gates: Array<() => void> = [];
    const order: string[] = [];
    const lanes = new OrderedLanes<string>({ concurrency: 1, capacity: 3 }, async (key, item) => {
      await new Promise<void>((resolve) => gates.push(resolve));
      order.push(`${key}${item}`);
    });
    await lanes.push('a', '1');
    await lanes.push('a', '2');
    let pushed = false;
    const third = lanes.push('b', '1').then(() => (pushed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(pushed).toBe(false);
    gates.shift()!();
    await third;
    expect(pushed).toBe(true);
    await eventually(() => gates.length === 1);
    gates.shift()!();
    await eventually(() => gates.length === 1);
    gates.shift()!();
    await lanes.idle();
    // a1, then b's turn before a2.
    expect(order).toEqual(['a1', 'b1', 'a2']);
  });
});

describe('RecentIds', () => {
  it('remembers the last ids up to its capacity, forgetting the oldest first', () => {
    const ids = new RecentIds(2);
    ids.add('a');
    ids.add('b');
    ids.add('a');
    ids.add('c');
    expect([ids.has('a'), ids.has('b'), ids.has('c'), ids.size]).toEqual([false, true, true, 2]);
  });
});
