/**
 * Work in lanes, one per key (a task): a lane's items are handled one after the other, in the
 * order they were pushed; at most `concurrency` lanes run at once, taking turns (a lane that has
 * handled one item goes to the back of the line), so one busy task cannot starve the others; and
 * at most `capacity` items are held in all, `push` waiting for room (backpressure on whoever
 * pushes: the consumer stops pulling from the stream).
 */
export class OrderedLanes<T> {
  private readonly lanes = new Map<string, T[]>();
  /** Keys with items, waiting for a slot, in turn. */
  private readonly ready: string[] = [];
  private running = 0;
  private held = 0;
  private readonly roomWaiters: Array<() => void> = [];
  private readonly idleWaiters: Array<() => void> = [];

  constructor(
    private readonly options: { concurrency: number; capacity: number },
    private readonly handle: (key: string, item: T) => Promise<void>,
  ) {
    if (options.concurrency < 1 || options.capacity < 1) throw new Error('OrderedLanes needs a concurrency and a capacity of at least 1');
  }

  /** Items held (waiting or being handled). */
  get size(): number {
    return this.held;
  }

  /** Adds `item` to its key's lane; resolves once the lanes hold fewer than `capacity` items. */
  async push(key: string, item: T): Promise<void> {
    const lane = this.lanes.get(key);
    this.held++;
    if (lane) lane.push(item);
    else {
      this.lanes.set(key, [item]);
      this.ready.push(key);
      this.pump();
    }
    while (this.held >= this.options.capacity) await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
  }

  /** Resolves when every item pushed so far has been handled. */
  idle(): Promise<void> {
    return this.held === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.running < this.options.concurrency && this.ready.length > 0) {
      const key = this.ready.shift()!;
      this.running++;
      // `handle` must not throw (the consumer retries inside it); a throw would only end that item.
      void this.runOne(key).catch(() => undefined);
    }
  }

  private async runOne(key: string): Promise<void> {
    const lane = this.lanes.get(key)!;
    try {
      await this.handle(key, lane[0]);
    } finally {
      lane.shift();
      this.held--;
      if (lane.length > 0) this.ready.push(key);
      else this.lanes.delete(key);
      this.running--;
      if (this.held < this.options.capacity) this.roomWaiters.splice(0).forEach((resolve) => resolve());
      if (this.held === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
      this.pump();
    }
  }
}
