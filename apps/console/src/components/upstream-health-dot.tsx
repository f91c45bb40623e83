import type { UpstreamStatusView } from '../api/types';
import { UPSTREAM_HEALTH_LABELS, upstreamHealth } from '../lib/upstream-view';

/** A coloured dot with its word (the colour is never the only sign). */
export function UpstreamHealthDot({ status }: { status: UpstreamStatusView }) {
  const health = upstreamHealth(status);
  return (
    <span className={`health health-${health}`} data-testid="upstream-health">
      <span className="health-dot" aria-hidden="true" /> {UPSTREAM_HEALTH_LABELS[health]}
    </span>
  );
}
