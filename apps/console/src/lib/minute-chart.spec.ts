import { describe, expect, it } from '@jest/globals';
import { minuteBars, niceCeiling } from './minute-chart';

describe('the per-minute chart', () => {
  it('rounds the axis up to 1, 2 or 5 times a power of ten', () => {
    expect([0, 1, 3, 7, 10, 11, 240].map(niceCeiling)).toEqual([1, 1, 5, 10, 10, 20, 500]);
  });

  it('draws two bars a minute, scaled to the axis, oldest on the left', () => {
    const { bars, max, totals } = minuteBars(
      [
        { minute: '2026-01-01T10:00:00Z', created: 4, completed: 1 },
        { minute: '2026-01-01T10:01:00Z', created: 0, completed: 5 },
      ],
      200,
      100,
    );
    expect(max).toBe(5);
    expect(totals).toEqual({ created: 4, completed: 6 });
    expect(bars).toHaveLength(4);
    expect(bars[0]).toMatchObject({ series: 'created', value: 4, x: 0, height: 80, y: 20 });
    expect(bars[3]).toMatchObject({ series: 'completed', value: 5, height: 100, y: 0 });
    expect(bars[2].x).toBe(100);
  });

  it('draws nothing for an empty hour', () => {
    expect(minuteBars([], 200, 100)).toEqual({ bars: [], max: 1, totals: { created: 0, completed: 0 } });
  });
});
