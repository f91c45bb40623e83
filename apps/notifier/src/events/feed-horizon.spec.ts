import { jest } from '@jest/globals';
import { FeedHorizon } from './feed-horizon';

/** A stream whose messages of the feed's subjects are at `feedSeqs`; records each question asked of it. */
function stream(feedSeqs: number[]) {
  const asked: number[] = [];
  let failures = 0;
  return {
    asked,
    failNext(times: number) {
      failures = times;
    },
    nextOnFeed: async (from: number): Promise<number | null> => {
      asked.push(from);
      if (failures > 0) {
        failures--;
        throw new Error('no JetStream');
      }
      return feedSeqs.find((seq) => seq >= from) ?? null;
    },
  };
}

/** Whether `promise` has settled, after the pending callbacks ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await jest.advanceTimersByTimeAsync(0);
  return done;
}

describe('FeedHorizon', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('answers at once, without asking the stream, for a sequence the feed has read past', async () => {
    const events = stream([3, 7]);
    const horizon = new FeedHorizon(events.nextOnFeed);
    horizon.applied(3, 1);
    horizon.applied(7, 0);
    await expect(horizon.reach(5, 1000)).resolves.toBe(7);
    expect(events.asked).toEqual([]);
  });

  it('reaches a sequence after the feed has read everything of its subjects up to it, when the stream holds none there', async () => {
    const events = stream([3]);
    const horizon = new FeedHorizon(events.nextOnFeed);
    horizon.applied(3, 0);
    await expect(horizon.reach(40, 1000)).resolves.toBe(40);
    expect(events.asked).toEqual([4]);
    // Known from then on: no question for what is below.
    await expect(horizon.reach(39, 1000)).resolves.toBe(40);
    expect(events.asked).toEqual([4]);
  });

  it('holds a wait until the feed has applied a message of its subjects that the stream holds below it', async () => {
    const events = stream([3, 10, 12]);
    const horizon = new FeedHorizon(events.nextOnFeed);
    horizon.applied(3, 0);
    const waiting = horizon.reach(20, 5000);
    expect(await settled(waiting)).toBe(false);
    expect(events.asked).toEqual([4]);
    expect(horizon.position).toBe(9);

    horizon.applied(10, 0);
    expect(await settled(waiting)).toBe(false);
    expect(events.asked).toEqual([4, 11]);

    horizon.applied(12, 0);
    await expect(waiting).resolves.toBe(20);
    expect(events.asked).toEqual([4, 11, 13]);
  });

  it('does not ask the stream while the feed is known to have more to read', async () => {
    const events = stream([3, 10, 12]);
    const horizon = new FeedHorizon(events.nextOnFeed);
    horizon.applied(3, 2);
    const waiting = horizon.reach(11, 5000);
    expect(await settled(waiting)).toBe(false);
    horizon.applied(10, 1);
    expect(await settled(waiting)).toBe(false);
    horizon.applied(12, 0);
    await expect(waiting).resolves.toBe(12);
    expect(events.asked).toEqual([]);
  });

  it('ends a wait after its time with the sequence read up to, while the feed does not get there', async () => {
    const events = stream([3, 10]);
    const horizon = new FeedHorizon(events.nextOnFeed);
    horizon.applied(3, 0);
    const waiting = horizon.reach(20, 5000);
    await jest.advanceTimersByTimeAsync(4999);
    expect(await settled(waiting)).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await expect(waiting).resolves.toBe(9);
  });

  it('asks the stream once for every wait that comes while it is being asked', async () => {
    let answer: (seq: number | null) => void = () => undefined;
    const asked: number[] = [];
    const horizon = new FeedHorizon((from) => {
      asked.push(from);
      return new Promise((resolve) => (answer = resolve));
    });
    const waits = [horizon.reach(5, 5000), horizon.reach(8, 5000), horizon.reach(6, 5000)];
    await jest.advanceTimersByTimeAsync(0);
    expect(asked).toEqual([1]);
    answer(null);
    // The first question was for 5: one more for 8 (the highest waited for since), from after 5.
    await jest.advanceTimersByTimeAsync(0);
    expect(asked).toEqual([1, 6]);
    answer(null);
    await expect(Promise.all(waits)).resolves.toEqual([5, 8, 8]);
  });

  it('asks again shortly when the stream could not be asked', async () => {
    const events = stream([]);
    events.failNext(2);
    const horizon = new FeedHorizon(events.nextOnFeed);
    const waiting = horizon.reach(4, 5000);
    await jest.advanceTimersByTimeAsync(250);
    await expect(waiting).resolves.toBe(4);
    expect(events.asked).toEqual([1, 1, 1]);
  });

  it('asks again once a wait ran out, in case the message counted on left the stream unread', async () => {
    const events = stream([]);
    const horizon = new FeedHorizon(events.nextOnFeed);
    horizon.applied(3, 1);
    const first = horizon.reach(9, 1000);
    await jest.advanceTimersByTimeAsync(1000);
    await expect(first).resolves.toBe(3);
    expect(events.asked).toEqual([]);
    await expect(horizon.reach(9, 1000)).resolves.toBe(9);
    expect(events.asked).toEqual([4]);
  });

  it('ends every wait when released, and answers each later one at once', async () => {
    const events = stream([2]);
    const horizon = new FeedHorizon(events.nextOnFeed);
    const waiting = horizon.reach(9, 60000);
    await jest.advanceTimersByTimeAsync(0);
    horizon.release();
    await expect(waiting).resolves.toBe(1);
    expect(await settled(horizon.reach(9, 60000))).toBe(true);
    expect(events.asked).toEqual([1]);
  });
});
