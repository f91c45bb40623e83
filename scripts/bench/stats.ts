/** Pure arithmetic of the benchmark: percentiles, medians, per-round ratios. No I/O here. */

/** The p-th percentile (0–100) of an ascending array, nearest-rank; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  if (p <= 0) return sorted[0];
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** The median of the finite values (mean of the two middle ones for an even count); NaN when none. */
export function median(values: readonly number[]): number {
  const finite = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (finite.length === 0) return NaN;
  const middle = Math.floor(finite.length / 2);
  return finite.length % 2 === 1 ? finite[middle] : (finite[middle - 1] + finite[middle]) / 2;
}

export interface LatencySummary {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function summarizeLatencies(latenciesMs: readonly number[]): LatencySummary {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: sorted.length ? sorted[sorted.length - 1] : NaN };
}

/** `combine(a, b)` for each round where both sides were measured (finite), in round order; `undefined` from `combine` leaves the round out. */
function pairRounds(
  left: ReadonlyArray<number | undefined>,
  right: ReadonlyArray<number | undefined>,
  combine: (a: number, b: number) => number | undefined,
): number[] {
  const combined: number[] = [];
  for (let round = 0; round < Math.min(left.length, right.length); round++) {
    const a = left[round];
    const b = right[round];
    if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b)) continue;
    const value = combine(a, b);
    if (value !== undefined) combined.push(value);
  }
  return combined;
}

/**
 * Ratios of `numerator` ÷ `denominator` taken round by round (both measured in the same round, so
 * machine drift cancels), then their median. Rounds where either side is missing or the denominator
 * is zero are left out.
 */
export function medianOfRoundRatios(
  numerator: ReadonlyArray<number | undefined>,
  denominator: ReadonlyArray<number | undefined>,
): { ratios: number[]; median: number } {
  const ratios = pairRounds(numerator, denominator, (top, bottom) => (bottom === 0 ? undefined : top / bottom));
  return { ratios, median: median(ratios) };
}

/**
 * Differences `minuend` − `subtrahend` taken round by round (both measured in the same round), then
 * their median. Rounds where either side is missing or not finite are left out.
 */
export function medianOfRoundDifferences(
  minuend: ReadonlyArray<number | undefined>,
  subtrahend: ReadonlyArray<number | undefined>,
): { differences: number[]; median: number } {
  const differences = pairRounds(minuend, subtrahend, (left, right) => left - right);
  return { differences, median: median(differences) };
}

/** Per-process CPU counters (clock ticks of utime + stime) read before and after a window. */
export type TickSample = ReadonlyMap<number, number>;

/**
 * CPU milliseconds spent between two samples by a set of pids: a pid seen in both counts its
 * difference; one that appeared during the window (absent before) counts all its ticks, since it
 * was born inside the window; one that vanished is lost (its last ticks are unknown). Counters never
 * go backwards, so a negative difference (a reused pid) counts as a newcomer.
 */
export function cpuDeltaMs(before: TickSample, after: TickSample, pids: Iterable<number>, clockTicksPerSecond: number): number {
  let ticks = 0;
  for (const pid of new Set(pids)) {
    const end = after.get(pid);
    if (end === undefined) continue;
    const start = before.get(pid);
    ticks += start === undefined || end < start ? end : end - start;
  }
  return (ticks * 1000) / clockTicksPerSecond;
}

/** CPU milliseconds per request, NaN when no request completed. */
export function perRequest(cpuMs: number, requests: number): number {
  return requests > 0 ? cpuMs / requests : NaN;
}

/** utime + stime (clock ticks) from the text of /proc/<pid>/stat; the command name may hold spaces or parentheses. */
export function parseProcStatTicks(stat: string): { ppid: number; ticks: number } {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state) of proc(5); utime and stime are fields 14 and 15.
  return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
}

/** VmHWM (peak resident set) in kB from the text of /proc/<pid>/status; NaN when absent. */
export function parseVmHwmKb(status: string): number {
  const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
  return match ? Number(match[1]) : NaN;
}

/** Busy clock ticks of all CPUs (user, nice, system, irq, softirq, steal) from the first line of /proc/stat. */
export function parseMachineBusyTicks(stat: string): number {
  const fields = /^cpu\s+(.*)$/m.exec(stat)?.[1].trim().split(/\s+/).map(Number);
  if (!fields || fields.length < 8 || fields.some((field) => !Number.isFinite(field))) throw new Error('no cpu line in /proc/stat');
  const [user, nice, system, , , irq, softirq, steal] = fields;
  return user + nice + system + irq + softirq + steal;
}

/** A figure as the tables print it: `–` when there is none, thousands grouped, else `digits` decimals. */
export function fmt(value: number | undefined, digits = 1): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  return value.toFixed(digits);
}
