/** Past this many tracked windows, expired ones are swept; past it after a sweep, the oldest go. */
const DEFAULT_MAX_WINDOWS = 100_000;

interface FailureWindow {
  failures: number;
  endsAt: number;
}

/**
 * Failures counted per key (an address, a secret's digest, a target) in fixed windows, in bounded
 * memory: at most `maxWindows` keys, expired windows swept first, then the oldest dropped.
 */
export class FailureWindows {
  private readonly windows = new Map<string, FailureWindow>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxWindows = DEFAULT_MAX_WINDOWS,
  ) {}

  /** How long (ms) `key` stays past its budget; 0 while it is within it. */
  blockedFor(key: string, now: number): number {
    const window = this.windows.get(key);
    if (!window || window.endsAt <= now || window.failures < this.limit) return 0;
    return window.endsAt - now;
  }

  /** How long (ms) the current window of `key` still runs; 0 when it has none. */
  windowLeft(key: string, now: number): number {
    const window = this.windows.get(key);
    return window && window.endsAt > now ? window.endsAt - now : 0;
  }

  /** The failures of `key` in its current window. */
  failuresOf(key: string, now: number): number {
    const window = this.windows.get(key);
    return window && window.endsAt > now ? window.failures : 0;
  }

  count(key: string, now: number): void {
    const window = this.windows.get(key);
    if (window && window.endsAt > now) {
      window.failures += 1;
      return;
    }
    if (window) this.windows.delete(key);
    if (this.windows.size >= this.maxWindows) this.makeRoom(now);
    this.windows.set(key, { failures: 1, endsAt: now + this.windowMs });
  }

  /** Takes back one failure, later shown not to be one. */
  uncount(key: string, now: number): void {
    const window = this.windows.get(key);
    if (window && window.endsAt > now && window.failures > 0) window.failures -= 1;
  }

  clear(key: string): void {
    this.windows.delete(key);
  }

  get size(): number {
    return this.windows.size;
  }

  /** Sweeps expired windows; when all are live, drops the oldest (windows are kept in the order they opened). */
  private makeRoom(now: number): void {
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
    while (this.windows.size >= this.maxWindows) this.windows.delete(this.windows.keys().next().value as string);
  }
}

/** Digests of credentials accepted before, least recently accepted first out past `max`. */
export class RecentlyAccepted {
  private readonly digests = new Set<string>();

  constructor(private readonly max: number) {}

  has(digest: string): boolean {
    return this.digests.has(digest);
  }

  add(digest: string): void {
    this.digests.delete(digest);
    this.digests.add(digest);
    if (this.digests.size > this.max) this.digests.delete(this.digests.values().next().value as string);
  }

  delete(digest: string): void {
    this.digests.delete(digest);
  }

  get size(): number {
    return this.digests.size;
  }
}
