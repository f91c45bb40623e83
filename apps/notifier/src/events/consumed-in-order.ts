/** Where a message of the durable consumer stands: its consumer and stream sequences, and whether it is its first delivery. */
export interface ConsumedMessage {
  deliverySequence: number;
  streamSequence: number;
  firstDelivery: boolean;
}

/**
 * What the durable consumer's own deliveries to this replica prove of the push-config events it
 * has applied, so that a task event need not wait for the push-config feed's horizon (and the
 * stream need not be asked where it is).
 *
 * The consumer hands out every event of the stream (push-config events among them) and numbers
 * each delivery, first deliveries in stream order. Messages handed over with consecutive delivery
 * numbers are every message the consumer handed to anyone meanwhile: so while this replica gets
 * an unbroken run of them and applies each push-config event among them, every push-config event
 * before the run's last first delivery is applied here, as long as every one before the run's
 * start was (the feed's horizon, or an earlier run). Anything else (another replica taking a
 * share, a message lost with a connection, a push-config event that could not be applied) breaks
 * the run, and the horizon covers the rest until a new run starts from it.
 */
export class ConsumedInOrder {
  private lastDelivery = 0;
  /** The stream sequence of the last first delivery handled. */
  private lastFirst = 0;
  /** Every push-config event at or below this stream sequence is applied here. */
  private applied = 0;

  /** The push-config feed has applied every push-config event up to `horizon`. */
  reached(horizon: number): void {
    this.applied = Math.max(this.applied, horizon);
  }

  /**
   * Takes the next message handled (in delivery order); whether every push-config event before it
   * is applied here. A message that is not a push-config event counts as applied itself; one that
   * is counts once `appliedPushConfig` says so.
   */
  next(message: ConsumedMessage, pushConfig: boolean): boolean {
    // The first message this process handles starts nothing: what came before it is unknown here.
    const unbroken = this.lastDelivery > 0 && message.deliverySequence === this.lastDelivery + 1;
    this.lastDelivery = message.deliverySequence;
    if (message.firstDelivery) {
      // Nothing of the stream lies between the last first delivery and this one that this replica did not get.
      if (unbroken && this.applied >= this.lastFirst) this.applied = Math.max(this.applied, message.streamSequence - 1);
      this.lastFirst = message.streamSequence;
    }
    const covered = message.streamSequence - 1 <= this.applied;
    if (covered && !pushConfig) this.applied = Math.max(this.applied, message.streamSequence);
    return covered;
  }

  /** The message last taken by `next` is a push-config event, now applied here. */
  appliedPushConfig(message: ConsumedMessage): void {
    if (message.streamSequence - 1 <= this.applied) this.applied = Math.max(this.applied, message.streamSequence);
  }
}
