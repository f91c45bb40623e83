import { useId } from 'react';
import { minuteBars, type MinuteCount } from '../../lib/minute-chart';

const WIDTH = 720;
const HEIGHT = 160;
const MARGIN = { left: 36, bottom: 20, top: 8 };
const TIME = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

/** Created and completed handoffs per minute over the last hour, as bars. */
export function PerMinuteChart({ points }: { points: MinuteCount[] }) {
  const titleId = useId();
  const descriptionId = useId();
  const { bars, max, totals } = minuteBars(points, WIDTH, HEIGHT);
  const first = points[0]?.minute;
  const last = points.at(-1)?.minute;
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${WIDTH + MARGIN.left} ${HEIGHT + MARGIN.top + MARGIN.bottom}`} role="img" aria-labelledby={`${titleId} ${descriptionId}`}>
        <title id={titleId}>Handoffs created and completed per minute, last hour</title>
        <desc
          id={descriptionId}
        >{`${totals.created} created and ${totals.completed} completed in the last ${points.length} minutes; at most ${max} a minute on the axis.`}</desc>
        <g transform={`translate(${MARGIN.left} ${MARGIN.top})`}>
          <line className="axis" x1={0} y1={HEIGHT} x2={WIDTH} y2={HEIGHT} />
          <line className="axis" x1={0} y1={0} x2={0} y2={HEIGHT} />
          <text className="axis-label" x={-6} y={8} textAnchor="end">
            {max}
          </text>
          <text className="axis-label" x={-6} y={HEIGHT} textAnchor="end">
            0
          </text>
          {bars.map((bar) => (
            <rect key={`${bar.minute}-${bar.series}`} className={`bar bar-${bar.series}`} x={bar.x} y={bar.y} width={bar.width} height={bar.height} />
          ))}
          {first && (
            <text className="axis-label" x={0} y={HEIGHT + 16}>
              {TIME.format(new Date(first))}
            </text>
          )}
          {last && (
            <text className="axis-label" x={WIDTH} y={HEIGHT + 16} textAnchor="end">
              {TIME.format(new Date(last))}
            </text>
          )}
        </g>
      </svg>
      <figcaption className="legend">
        <span className="legend-created">Created ({totals.created})</span> <span className="legend-completed">Completed ({totals.completed})</span>
      </figcaption>
    </figure>
  );
}
