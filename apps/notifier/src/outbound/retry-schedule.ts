const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** Parses `5s,30s,5m,2h` into delays in milliseconds. */
export function parseRetrySchedule(text: string): number[] {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map((part) => {
      const match = /^(\d+)(ms|s|m|h)$/.exec(part);
      if (!match) throw new Error(`Invalid retry delay: ${part}`);
      return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
    });
}

/** The longest wait a `Retry-After` may impose. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** Reads a `Retry-After` header (seconds or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed) * 1000, MAX_RETRY_AFTER_MS);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.min(Math.max(0, date - now), MAX_RETRY_AFTER_MS);
}

/**
 * The wait before the next attempt after `failedAttempts` failed ones in this round, or null when
 * the schedule is exhausted (the delivery becomes a dead letter). Exponential-ish by the schedule,
 * with ±20% jitter, and never shorter than what the receiver asked for with `Retry-After`.
 */
export function nextRetryDelay(schedule: number[], failedAttempts: number, retryAfterMs: number | null, random = Math.random): number | null {
  if (failedAttempts < 1 || failedAttempts > schedule.length) return null;
  const base = schedule[failedAttempts - 1];
  const jittered = Math.round(base * (0.8 + random() * 0.4));
  return Math.max(jittered, retryAfterMs ?? 0);
}
