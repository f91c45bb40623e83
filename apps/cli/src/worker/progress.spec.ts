import { jest } from '@jest/globals';
import { ProgressCoalescer } from './progress';

describe('ProgressCoalescer', () => {
  let now = 0;
  beforeEach(() => {
    jest.useFakeTimers();
    now = 0;
  });
  afterEach(() => jest.useRealTimers());

  function coalescer(send: (text: string) => Promise<boolean>, maxUpdates = 50, maxChars = 4000): ProgressCoalescer {
    return new ProgressCoalescer({ intervalMs: 10_000, maxUpdates, maxChars, send }, () => now);
  }

  async function advance(ms: number): Promise<void> {
    now += ms;
    await jest.advanceTimersByTimeAsync(ms);
  }

  it('sends the first line at once and joins the lines of one interval into the next update', async () => {
    const sent: string[] = [];
    const progress = coalescer(async (text) => (sent.push(text), true));
    progress.push('compiling');
    await advance(0);
    expect(sent).toEqual(['compiling']);
    progress.push('testing 1/3');
    progress.push('testing 2/3');
    await advance(9_999);
    expect(sent).toEqual(['compiling']);
    await advance(1);
    expect(sent).toEqual(['compiling', 'testing 1/3\ntesting 2/3']);
    expect(progress.updatesSent).toBe(2);
  });

  it('keeps the lines when the budget has none to spare and sends them with the next ones', async () => {
    const sent: string[] = [];
    let spare = false;
    const progress = coalescer(async (text) => (spare ? (sent.push(text), true) : false));
    progress.push('one');
    await advance(0);
    expect(sent).toEqual([]);
    spare = true;
    progress.push('two');
    await advance(10_000);
    expect(sent).toEqual(['one\ntwo']);
  });

  it('stops after maxUpdates updates and cuts an update to maxChars, keeping the newest lines', async () => {
    const sent: string[] = [];
    const progress = coalescer(async (text) => (sent.push(text), true), 2, 60);
    progress.push('first');
    await advance(0);
    progress.push('x'.repeat(80));
    progress.push('the newest line');
    await advance(10_000);
    progress.push('never sent');
    await advance(20_000);
    expect(sent).toHaveLength(2);
    expect(sent[1].length).toBeLessThanOrEqual(60);
    expect(sent[1].endsWith('the newest line')).toBe(true);
    expect(sent[1]).toMatch(/^\[… \d+ earlier characters cut …\]\n/);
  });

  it('drops what is pending on close and waits for an update in flight', async () => {
    const sent: string[] = [];
    let release: (() => void) | undefined;
    const progress = coalescer(
      (text) =>
        new Promise((resolve) => {
          release = () => (sent.push(text), resolve(true));
        }),
    );
    progress.push('in flight');
    await advance(0);
    progress.push('pending');
    let closed = false;
    const closing = progress.close().then(() => (closed = true));
    await advance(0);
    expect(closed).toBe(false);
    release?.();
    await closing;
    await advance(20_000);
    expect(sent).toEqual(['in flight']);
  });

  it('treats a refused update as sent (it is not retried)', async () => {
    const calls: string[] = [];
    const progress = coalescer(async (text) => {
      calls.push(text);
      throw new Error('invalid_transition');
    });
    progress.push('a');
    await advance(0);
    progress.push('b');
    await advance(10_000);
    expect(calls).toEqual(['a', 'b']);
  });
});
