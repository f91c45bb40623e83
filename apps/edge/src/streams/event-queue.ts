import type { PositionedTaskEvent } from '@app/contracts';

/** Events a stream holds for a client that reads slower than they come; past it (or past its bytes) the stream ends (resume with Last-Event-ID). */
export const STREAM_BUFFER_LIMIT = 1000;

/** A live event, with the size it arrived with when the feed knows it. */
export type QueuedEvent = PositionedTaskEvent & { bytes?: number };

function sizeOf(item: QueuedEvent): number {
  return item.bytes ?? Buffer.byteLength(JSON.stringify(item.event));
}

export type QueueResult = { kind: 'event'; item: PositionedTaskEvent } | { kind: 'resync' } | { kind: 'deadline' } | { kind: 'aborted' } | { kind: 'overflow' };

/** The live events of one stream, in the order the feed delivered them, waiting to be written. */
export class EventQueue {
  private readonly items: QueuedEvent[] = [];
  private readonly sizes: number[] = [];
  private bytes = 0;
  private overflowed = false;
  private resyncRequested = false;
  private wake?: () => void;

  /** At most `maxBytes` of events wait (and STREAM_BUFFER_LIMIT of them); past either the queue overflows and keeps no more. */
  constructor(private readonly maxBytes = Number.POSITIVE_INFINITY) {}

  /** Bytes of the events waiting to be written. */
  get bufferedBytes(): number {
    return this.bytes;
  }

  push(item: QueuedEvent): void {
    const size = sizeOf(item);
    if (this.overflowed || this.items.length >= STREAM_BUFFER_LIMIT || this.bytes + size > this.maxBytes) this.overflowed = true;
    else {
      this.items.push(item);
      this.sizes.push(size);
      this.bytes += size;
    }
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
      if (item) {
        this.bytes -= this.sizes.shift() ?? 0;
        return { kind: 'event', item };
      }
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
