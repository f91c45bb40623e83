import type { PositionedTaskEvent } from '@app/contracts';

/** Events a stream holds for a client that reads slower than they come; past it the stream ends (resume with Last-Event-ID). */
export const STREAM_BUFFER_LIMIT = 1000;

export type QueueResult = { kind: 'event'; item: PositionedTaskEvent } | { kind: 'resync' } | { kind: 'deadline' } | { kind: 'aborted' } | { kind: 'overflow' };

/** The live events of one stream, in the order the feed delivered them, waiting to be written. */
export class EventQueue {
  private readonly items: PositionedTaskEvent[] = [];
  private overflowed = false;
  private resyncRequested = false;
  private wake?: () => void;

  push(item: PositionedTaskEvent): void {
    if (this.items.length >= STREAM_BUFFER_LIMIT) this.overflowed = true;
    else this.items.push(item);
    this.wake?.();
  }

  /** Live events may have been lost (the NATS connection was re-established): the stream reads the log again. */
  requestResync(): void {
    this.resyncRequested = true;
    this.wake?.();
  }

  /** The next event, `resync` when asked to, or why there is none: `deadline` (epoch ms) passed, `signal` aborted, or the buffer overflowed. */
  async next(deadline: number, signal: AbortSignal): Promise<QueueResult> {
    for (;;) {
      if (signal.aborted) return { kind: 'aborted' };
      if (this.resyncRequested) {
        this.resyncRequested = false;
        return { kind: 'resync' };
      }
      const item = this.items.shift();
      if (item) return { kind: 'event', item };
      if (this.overflowed) return { kind: 'overflow' };
      const remaining = deadline - Date.now();
      if (remaining <= 0) return { kind: 'deadline' };
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          this.wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, remaining);
        signal.addEventListener('abort', done);
        this.wake = done;
      });
    }
  }
}
