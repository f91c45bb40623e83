export interface MinuteCount {
  minute: string;
  created: number;
  completed: number;
}

export interface ChartBar {
  minute: string;
  series: 'created' | 'completed';
  x: number;
  y: number;
  width: number;
  height: number;
  value: number;
}

export interface ChartGeometry {
  bars: ChartBar[];
  /** The largest count on the axis (at least 1), rounded up to a readable step. */
  max: number;
  totals: { created: number; completed: number };
}

/** A tidy top of the axis: 1, 2, 5 times a power of ten, at or above the largest value. */
export function niceCeiling(value: number): number {
  if (value <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

/** Two bars per minute (created, completed) in a width × height box, oldest minute on the left. */
export function minuteBars(points: MinuteCount[], width: number, height: number): ChartGeometry {
  const max = niceCeiling(Math.max(0, ...points.map((point) => Math.max(point.created, point.completed))));
  const slot = points.length > 0 ? width / points.length : width;
  const barWidth = Math.max(slot / 2 - 1, 0.5);
  const bars: ChartBar[] = [];
  points.forEach((point, index) => {
    (['created', 'completed'] as const).forEach((series, offset) => {
      const value = point[series];
      const barHeight = (value / max) * height;
      bars.push({ minute: point.minute, series, value, x: index * slot + offset * (barWidth + 1), y: height - barHeight, width: barWidth, height: barHeight });
    });
  });
  const totals = points.reduce((sum, point) => ({ created: sum.created + point.created, completed: sum.completed + point.completed }), {
    created: 0,
    completed: 0,
  });
  return { bars, max, totals };
}
