import { eventually, EventuallyTimeout } from './eventually';

describe('eventually', () => {
  it('returns what the probe returned once it stops throwing', async () => {
    let calls = 0;
    const value = await eventually(() => {
      calls++;
      expect(calls).toBeGreaterThanOrEqual(3);
      return `ready after ${calls}`;
    }, 5000, 1);
    expect(value).toBe('ready after 3');
  });

  it('reports what the last attempt saw when it gives up', async () => {
    let deliveries = 0;
    const failure = await eventually(() => {
      deliveries++;
      expect({ deliveries }).toEqual({ deliveries: -1 });
    }, 30, 1).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EventuallyTimeout);
    const timeout = failure as EventuallyTimeout;
    expect(timeout.attempts).toBe(deliveries);
    expect(timeout.message).toContain(`"deliveries": ${deliveries}`);
    expect(timeout.message).not.toContain('condition still false');
  });

  it('describes a thrown value that is not an Error', async () => {
    const failure = await eventually(() => {
      throw { inbox: ['a', 'b'] };
    }, 10, 1).catch((error: unknown) => error);
    expect((failure as Error).message).toContain("inbox: [ 'a', 'b' ]");
  });

  it('refuses a probe that answers with a boolean, which could not say what it saw', async () => {
    await expect(eventually(() => false, 1000, 1)).rejects.toThrow(/returned a boolean/);
    await expect(eventually(async () => true, 1000, 1)).rejects.toThrow(/returned a boolean/);
  });
});
