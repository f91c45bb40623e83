interface Entry<T> {
  value: Promise<T>;
  expiresAt: number;
}

/**
 * Answers kept for a short, fixed time. Concurrent misses on one key share a single load; a
 * failed load is forgotten at once, so only successful answers are reused. The oldest entry goes
 * when the cache is full.
 */
export class ExpiringCache<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: string, load: () => Promise<T>, now = Date.now()): Promise<T> {
    if (this.ttlMs <= 0) return load();
    const cached = this.entries.get(key);
    if (cached && cached.expiresAt > now) return cached.value;
    if (cached) this.entries.delete(key);
    const entry: Entry<T> = { value: load(), expiresAt: now + this.ttlMs };
    this.entries.set(key, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    entry.value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return entry.value;
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
