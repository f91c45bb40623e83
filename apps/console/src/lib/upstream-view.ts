import type { TimelineEntry, UpstreamCallView, UpstreamInterface, UpstreamStatusView } from '../api/types';

export type UpstreamHealth = 'ok' | 'failing' | 'breaker_open' | 'change_pending' | 'unknown';

export const UPSTREAM_HEALTH_LABELS: Record<UpstreamHealth, string> = {
  ok: 'Healthy',
  failing: 'Failing',
  breaker_open: 'Breaker open',
  change_pending: 'Card change pending',
  unknown: 'Not contacted yet',
};

/**
 * One word for an upstream agent's state, the most pressing first: an open breaker (no request
 * goes out), the last request failed, a card change waits for an operator, or it answered last.
 */
export function upstreamHealth(status: UpstreamStatusView): UpstreamHealth {
  const { health, card } = status;
  if (health.breaker === 'open') return 'breaker_open';
  const failedLast = health.last_failure_at !== null && (health.last_success_at === null || health.last_failure_at > health.last_success_at);
  if (failedLast) return 'failing';
  if (card.pending_change) return 'change_pending';
  return health.last_success_at ? 'ok' : 'unknown';
}

export const BINDING_LABELS: Record<UpstreamInterface['binding'], string> = { JSONRPC: 'JSON-RPC', 'HTTP+JSON': 'HTTP+JSON' };

export const BREAKER_LABELS: Record<UpstreamStatusView['health']['breaker'], string> = {
  closed: 'Closed (requests go out)',
  half_open: 'Half open (trying one request)',
  open: 'Open (requests wait)',
};

/** The host (and port) of a URL, for a short label; the URL itself when it does not parse. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** A card field's value as text: strings as they are, booleans as yes/no, the rest as JSON. */
export function changeValueText(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return JSON.stringify(value);
}

export type MergedTimelineItem = { kind: 'event'; at: string; entry: TimelineEntry } | { kind: 'upstream_call'; at: string; call: UpstreamCallView };

/**
 * The task's events and the relay's upstream calls for it in one list, by time: both come oldest
 * first, and a call that started at the same instant as an event comes after it (the event caused it).
 */
export function mergeTimeline(entries: TimelineEntry[], calls: UpstreamCallView[]): MergedTimelineItem[] {
  const merged: MergedTimelineItem[] = [];
  let callIndex = 0;
  const time = (at: string): number => {
    const value = Date.parse(at);
    return Number.isNaN(value) ? 0 : value;
  };
  for (const entry of entries) {
    while (callIndex < calls.length && time(calls[callIndex].at) < time(entry.at)) {
      merged.push({ kind: 'upstream_call', at: calls[callIndex].at, call: calls[callIndex] });
      callIndex += 1;
    }
    merged.push({ kind: 'event', at: entry.at, entry });
  }
  for (; callIndex < calls.length; callIndex += 1) merged.push({ kind: 'upstream_call', at: calls[callIndex].at, call: calls[callIndex] });
  return merged;
}
