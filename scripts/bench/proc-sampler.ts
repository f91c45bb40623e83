/**
 * Reads CPU time and peak RSS of processes from /proc (Linux): utime + stime of /proc/<pid>/stat in
 * clock ticks, VmHWM of /proc/<pid>/status. A process group (e.g. "the Postgres backends of the
 * bench database") resolves its pids at every sample, so processes that come and go are counted.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpuDeltaMs, parseProcStatTicks, parseVmHwmKb } from './stats';

export function clockTicksPerSecond(): number {
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(value) && value > 0 ? value : 100;
  } catch {
    return 100;
  }
}

export function readProcStat(pid: number): { ppid: number; ticks: number } | undefined {
  try {
    return parseProcStatTicks(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

export function readPeakRssKb(pid: number): number {
  try {
    return parseVmHwmKb(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return NaN;
  }
}

/** Pids whose command name (/proc/<pid>/comm) is `name`. */
export function pidsByCommand(name: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** A named set of processes whose pids may change between samples. */
export interface ProcessGroup {
  name: string;
  pids(): Promise<number[]> | number[];
}

export interface GroupSample {
  pids: number[];
  ticks: Map<number, number>;
}

export type Sample = Map<string, GroupSample>;

export interface GroupUsage {
  cpuMs: number;
  /** Highest VmHWM of the group's processes seen at the end of the window (kB). */
  peakRssKb: number;
  pids: number[];
}

export class ProcessSampler {
  readonly clockTicks = clockTicksPerSecond();
  private readonly peakRss = new Map<string, number>();

  constructor(
    private readonly groups: ProcessGroup[],
    /** Called before each sample (e.g. to read pg_stat_activity once for all Postgres groups). */
    private readonly refresh: () => Promise<void> = async () => undefined,
  ) {}

  async sample(names?: string[]): Promise<Sample> {
    await this.refresh();
    const sample: Sample = new Map();
    for (const group of this.groups) {
      if (names && !names.includes(group.name)) continue;
      const pids = await group.pids();
      const ticks = new Map<number, number>();
      for (const pid of pids) {
        const stat = readProcStat(pid);
        if (stat) ticks.set(pid, stat.ticks);
      }
      sample.set(group.name, { pids, ticks });
    }
    return sample;
  }

  /** CPU ms per group between two samples, and the peak RSS of its processes now. */
  usage(before: Sample, after: Sample): Map<string, GroupUsage> {
    const result = new Map<string, GroupUsage>();
    for (const [name, end] of after) {
      const start = before.get(name) ?? { pids: [], ticks: new Map<number, number>() };
      const pids = [...new Set([...start.pids, ...end.pids])];
      const cpuMs = cpuDeltaMs(start.ticks, end.ticks, pids, this.clockTicks);
      let peak = NaN;
      for (const pid of end.pids) {
        const rss = readPeakRssKb(pid);
        if (Number.isFinite(rss) && !(rss <= peak)) peak = rss;
      }
      if (Number.isFinite(peak)) this.peakRss.set(name, Math.max(peak, this.peakRss.get(name) ?? 0));
      result.set(name, { cpuMs, peakRssKb: peak, pids: end.pids });
    }
    return result;
  }

  /** The highest VmHWM seen per group over the run (kB). */
  peaks(): Record<string, number> {
    return Object.fromEntries(this.peakRss);
  }
}
