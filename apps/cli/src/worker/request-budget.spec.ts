import { jest } from '@jest/globals';
import { RequestBudget } from './request-budget';

describe('RequestBudget', () => {
  it('starts full, refills at its rate, never above its size, and keeps a reserve from spare calls', () => {
    let now = 0;
    const budget = new RequestBudget(60, () => now);
    expect(budget.available()).toBe(60);
    for (let call = 0; call < 45; call++) expect(budget.trySpare(15)).toBe(true);
    expect(budget.trySpare(15)).toBe(false);
    expect(budget.available()).toBe(15);
    now += 2000; // 60 a minute: one a second
    expect(budget.available()).toBeCloseTo(17);
    now += 3_600_000;
    expect(budget.available()).toBe(60);
  });

  it('makes a caller wait for a token when none is left', async () => {
    jest.useFakeTimers();
    try {
      const budget = new RequestBudget(60, () => Date.now());
      for (let call = 0; call < 60; call++) await budget.take();
      let taken = false;
      const taking = budget.take().then(() => (taken = true));
      await jest.advanceTimersByTimeAsync(500);
      expect(taken).toBe(false);
      await jest.advanceTimersByTimeAsync(600);
      await taking;
      expect(taken).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });
});
