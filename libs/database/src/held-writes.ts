/** How a `HeldWrites` holds its items. */
export interface HeldWritesOptions {
  /** How long an item waits to be written with the others of that moment. */
  delayMs: number;
  /** The most items held: more are written at once, and while a write fails the oldest beyond this are dropped. */
  maxHeld: number;
  /** Told of each failed write (the items stay held for the next, within `maxHeld`). */
  onWriteFailed: (error: unknown, items: number) => void;
}

/**
 * Rows whose write may wait a moment, written together: every `delayMs` one statement (`writeAll`)
 * for whatever came meanwhile, in the order it came, instead of one statement each. Only for
 * writes whose loss in a crash within that moment costs nothing but repeated work: what is held is
 * in memory until it is written.
 */
export class HeldWrites<T> {
  private held: T[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private droppedItems = 0;
  private closed = false;

  constructor(
    private readonly writeAll: (items: T[]) => Promise<void>,
    private readonly options: HeldWritesOptions,
  ) {}

  /** Items dropped because they could not be written while more came (a bound on memory while Postgres is away). */
  get dropped(): number {
    return this.droppedItems;
  }

  add(item: T): void {
    // An item that comes while the process stops (its database closing) is not kept.
    if (this.closed) return;
    this.held.push(item);
    if (this.held.length >= this.options.maxHeld) void this.write();
    else this.writeIn(this.options.delayMs);
  }

  /** Writes every item held now (and waits for a write under way). */
  async write(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.writing) await this.writing;
    if (this.held.length === 0) return;
    const items = this.held;
    this.held = [];
    this.writing = this.writeAll(items)
      .catch((error: unknown) => {
        // Kept for the next write; past the bound the oldest are dropped.
        this.held = [...items, ...this.held];
        const over = this.held.length - this.options.maxHeld;
        if (over > 0) {
          this.held.splice(0, over);
          this.droppedItems += over;
        }
        this.options.onWriteFailed(error, items.length);
        if (!this.closed) this.writeIn(this.options.delayMs * 5);
      })
      .finally(() => (this.writing = null));
    await this.writing;
  }

  /** Writes what is held and takes no more. */
  async close(): Promise<void> {
    this.closed = true;
    await this.write();
  }

  private writeIn(ms: number): void {
    this.timer ??= setTimeout(() => void this.write(), ms).unref();
  }
}
