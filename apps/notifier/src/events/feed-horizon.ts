/**
 * The stream sequence of the first message of the feed's subjects at or after `from`, as the
 * stream holds it now, or null when it holds none there.
 */
export type NextOnFeed = (from: number) => Promise<number | null>;

interface Waiter {
  seq: number;
  resolve: (horizon: number) => void;
  timer: NodeJS.Timeout;
}

/** The pause before asking the stream again after it could not be asked. */
const PROBE_RETRY_MS = 100;

/**
 * How far an ordered feed of some subjects of a stream has read that stream: the horizon is the
 * highest stream sequence at or below which every message of the feed's subjects has been
 * applied. It rises as the feed applies its messages (in stream order), and past them when the
 * stream, asked, holds none of the feed's subjects between the feed's last message and a sequence
 * someone waits for: that sequence is already taken, so no later message can get one below it.
 *
 * The stream is only asked while someone waits and the feed is not known to have more to read
 * (its last message left nothing pending): one request answers for every sequence waited for.
 */
export class FeedHorizon {
  private horizon = 0;
  /** A message of the feed's subjects the stream holds and the feed has not applied yet: nothing to ask until it has. */
  private unread = 0;
  private readonly waiters = new Set<Waiter>();
  private probing = false;
  private released = false;

  constructor(private readonly nextOnFeed: NextOnFeed) {}

  get position(): number {
    return this.horizon;
  }

  /**
   * The feed has applied its message at `seq` (and, being ordered, each one before it);
   * `pending` is how many more of its subjects the stream held when that message was handed over.
   */
  applied(seq: number, pending: number): void {
    this.raise(seq);
    if (pending > 0) this.unread = Math.max(this.unread, seq + 1);
    this.settle();
  }

  /**
   * Resolves with the horizon as soon as it is at least `seq`, or after `timeoutMs` with the
   * horizon reached by then (below `seq`). Never rejects.
   */
  reach(seq: number, timeoutMs: number): Promise<number> {
    if (seq <= this.horizon || this.released) return Promise.resolve(this.horizon);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        seq,
        resolve,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          // Should the message counted on have left the stream unread, the next wait asks again.
          this.unread = 0;
          resolve(this.horizon);
        }, timeoutMs),
      };
      this.waiters.add(waiter);
      void this.probe();
    });
  }

  /** Ends every wait now, and each one after at once, with the horizon reached (the service stops). */
  release(): void {
    this.released = true;
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(this.horizon);
    }
    this.waiters.clear();
  }

  private raise(seq: number): void {
    if (seq > this.horizon) this.horizon = seq;
  }

  private settle(): void {
    for (const waiter of this.waiters) {
      if (waiter.seq > this.horizon) continue;
      clearTimeout(waiter.timer);
      this.waiters.delete(waiter);
      waiter.resolve(this.horizon);
    }
    void this.probe();
  }

  private highestWaitedFor(): number {
    let highest = 0;
    for (const waiter of this.waiters) highest = Math.max(highest, waiter.seq);
    return highest;
  }

  private async probe(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    try {
      for (;;) {
        const target = this.highestWaitedFor();
        if (target <= this.horizon || this.unread > this.horizon) return;
        const from = this.horizon + 1;
        let next: number | null;
        try {
          next = await this.nextOnFeed(from);
        } catch {
          // Asked again shortly, while anyone still waits (each wait ends at its own deadline).
          await new Promise((resolve) => setTimeout(resolve, PROBE_RETRY_MS));
          continue;
        }
        if (next === null) this.raise(target);
        else {
          this.raise(next - 1);
          this.unread = Math.max(this.unread, next);
        }
        this.settle();
      }
    } finally {
      this.probing = false;
    }
  }
}
