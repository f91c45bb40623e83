/** What `HeldAcks` needs of a JetStream message. */
export interface Acknowledgeable {
  ack(): void;
}

/**
 * Acknowledgements of handled JetStream messages, held for a moment and then sent together, so
 * that many acks leave in one socket write (the client coalesces what is published in one tick)
 * instead of one write, and one wake-up of the server, per message. Only a message its consumer
 * is done with is held (the notifier: its deliveries recorded, or none needed); a crash before
 * the acks leave gets those messages again after the ack wait, so handling one again must change
 * nothing.
 *
 * Holding is bounded twice: at most `maxHeld` acks (kept below the consumer's max ack pending,
 * or the server would stop handing out events while they wait) and at most `holdMs` long.
 */
export class HeldAcks {
  private held: Acknowledgeable[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly maxHeld: number,
    private readonly holdMs: number,
  ) {}

  get size(): number {
    return this.held.length;
  }

  add(message: Acknowledgeable): void {
    this.held.push(message);
    if (this.held.length >= this.maxHeld) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.holdMs);
  }

  /** Sends every held ack now (before a shutdown drains the connection, or when the hold is full). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const held = this.held;
    this.held = [];
    for (const message of held) {
      try {
        message.ack();
      } catch {
        // The connection is gone: the event comes back after the ack wait, and records nothing new.
      }
    }
  }
}
