import { WakeableDelay } from './wakeable-delay';

describe('WakeableDelay', () => {
  it('waits the full time when nobody wakes it', async () => {
    const delay = new WakeableDelay();
    const startedAt = Date.now();
    await delay.wait(60);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(55);
  });

  it('is cut short by wake()', async () => {
    const delay = new WakeableDelay();
    const startedAt = Date.now();
    const waiting = delay.wait(10_000);
    delay.wake();
    await waiting;
    expect(Date.now() - startedAt).toBeLessThan(1000);
  });

  it('keeps a wake-up that came between two pauses for the next one', async () => {
    const delay = new WakeableDelay();
    delay.wake();
    const startedAt = Date.now();
    await delay.wait(10_000);
    expect(Date.now() - startedAt).toBeLessThan(1000);
  });

  it('ignores wake() during a pause that is not wakeable, but not interrupt()', async () => {
    const delay = new WakeableDelay();
    let done = false;
    const waiting = delay.wait(10_000, false).then(() => {
      done = true;
    });
    delay.wake();
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    delay.interrupt();
    await waiting;
    expect(done).toBe(true);
  });
});
