import { eventually, EventuallyTimeout } from './eventually';

describe('eventually', () => {
  it('returns what the probe returned once it stops throwing', async () => {
    let calls = 0;
    const value = await eventually(
      () => {
        calls++;
        expect(calls).toBeGreaterThanOrEqual(3);
        return `ready after ${calls}`;
      },
      5000,
      1,
    );
    expect(value).toBe('ready after 3');
  });

  it('reports what the last attempt saw when it gives up', async () => {
    let deliveries = 0;
    const failure = await eventually(
      () => {
        deliveries++;
        expect({ deliveries }).toEqual({ deliveries: -1 });
      },
      30,
      1,
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EventuallyTimeout);
    const timeout = failure as EventuallyTimeout;
    expect(timeout.attempts).toBe(deliveries);
    expect(timeout.message).toContain(`"deliveries": ${deliveries}`);
    expect(timeout.message).not.toContain('condition still false');
  });

  it('describes a thrown value that is not an Error', async () => {
    const failure = await eventually(
      () => {
        throw { inbox: ['a', 'b'] };
      },
      10,
      1,
    ).catch((error: unknown) => error);
    expect((failure as Error).message).toContain("inbox: [ 'a', 'b' ]");
  });

  it('says that a probe answering false could not tell what it saw', async () => {
    const failure = await eventually(() => false, 10, 1).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EventuallyTimeout);
    expect((failure as Error).message).toMatch(/answered false, which cannot say what it saw: assert on what it read instead/);
  });

  it('takes any other answer, true included, as done', async () => {
    await expect(eventually(async () => true, 1000, 1)).resolves.toBe(true);
    await expect(eventually(() => 0, 1000, 1)).resolves.toBe(0);
  });
});
