import { monotonicFactory } from 'ulid';
import { randomIdFraction, randomIdHex } from './random-ids';

describe('random ids', () => {
  it('give hex of the asked length, a different value each time, across refills of the pool', () => {
    const seen = new Set<string>();
    // 1,000 ids of 16 bytes draw the 4 KiB pool several times over.
    for (let index = 0; index < 1000; index++) {
      const id = randomIdHex(16);
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(1000);
    expect(randomIdHex(8)).toMatch(/^[0-9a-f]{16}$/);
  });

  it('refuse a size the pool cannot give at once', () => {
    expect(() => randomIdHex(0)).toThrow(RangeError);
    expect(() => randomIdHex(4097)).toThrow(RangeError);
  });

  it('give fractions in [0, 1) that reach both ends of a 32-letter alphabet evenly', () => {
    const letters = new Array<number>(32).fill(0);
    for (let index = 0; index < 32_000; index++) {
      const fraction = randomIdFraction();
      expect(fraction).toBeGreaterThanOrEqual(0);
      expect(fraction).toBeLessThan(1);
      letters[Math.floor(fraction * 32)]++;
    }
    // Each letter's expected count is 1,000 (standard deviation about 31): 800 is more than six away.
    for (const count of letters) expect(count).toBeGreaterThan(800);
  });

  it('make ULIDs that increase within one millisecond', () => {
    const next = monotonicFactory(randomIdFraction);
    const ids = Array.from({ length: 50 }, () => next(1_765_000_000_000));
    for (const id of ids) expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(50);
  });
});
