import { MAX_RETRY_AFTER_MS, nextRetryDelay, parseRetryAfter, parseRetrySchedule } from './retry-schedule';

describe('retry schedule', () => {
  it('parses delays with units', () => {
    expect(parseRetrySchedule('100ms, 5s,30s,5m,2h')).toEqual([100, 5000, 30000, 300000, 7200000]);
    expect(() => parseRetrySchedule('5x')).toThrow(/Invalid retry delay/);
  });

  it('spans about a day by default', () => {
    const total = parseRetrySchedule('5s,30s,2m,10m,30m,1h,2h,4h,8h,8h').reduce((sum, delay) => sum + delay, 0);
    expect(total).toBeGreaterThan(20 * 3_600_000);
    expect(total).toBeLessThan(28 * 3_600_000);
  });

  it('picks the delay after the n-th failure, with ±20% jitter, and null when exhausted', () => {
    const schedule = [1000, 2000, 3000];
    expect(nextRetryDelay(schedule, 1, null, () => 0.5)).toBe(1000);
    expect(nextRetryDelay(schedule, 2, null, () => 0)).toBe(1600);
    expect(nextRetryDelay(schedule, 3, null, () => 1)).toBe(3600);
    expect(nextRetryDelay(schedule, 4, null)).toBeNull();
  });

  it('waits at least what Retry-After asks', () => {
    expect(nextRetryDelay([1000], 1, 60_000, () => 0.5)).toBe(60_000);
    expect(nextRetryDelay([1000], 1, 10, () => 0.5)).toBe(1000);
  });

  it('reads Retry-After in seconds or as an HTTP date, capped', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('999999999', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
});
