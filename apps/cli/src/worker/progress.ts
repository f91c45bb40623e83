import { keepTail } from './output';

export interface ProgressOptions {
  /** At most one update per this many milliseconds. */
  intervalMs: number;
  /** At most this many updates in all (each is a message of the task, which holds at most 500). */
  maxUpdates: number;
  /** An update's text at most this long (the newest lines kept). */
  maxChars: number;
  /** Sends one update; answers false when it could not be sent now (no request budget left): the text is kept and tried again. */
  send: (text: string) => Promise<boolean>;
}

/**
 * Turns a command's progress lines into status updates: the first goes out at once, later ones at
 * most once per interval, and the lines that came in between are joined into one update.
 */
export class ProgressCoalescer {
  private lines: string[] = [];
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> | null = null;
  private sent = 0;
  private closed = false;

  constructor(
    private readonly options: ProgressOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** How many updates went out. */
  get updatesSent(): number {
    return this.sent;
  }

  push(line: string): void {
    if (this.closed || line === '' || this.sent >= this.options.maxUpdates) return;
    this.lines.push(line);
    this.schedule();
  }

  /** Stops: drops what was not sent (the task's end says more) and waits for an update in flight. */
  async close(): Promise<void> {
    this.closed = true;
    this.lines = [];
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.sending;
  }

  private schedule(): void {
    if (this.timer || this.sending || this.lines.length === 0 || this.closed) return;
    const wait = Math.max(0, this.lastSentAt + this.options.intervalMs - this.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.sending = this.flush().finally(() => {
        this.sending = null;
        this.schedule();
      });
    }, wait);
  }

  private async flush(): Promise<void> {
    if (this.closed || this.lines.length === 0) return;
    const lines = this.lines;
    this.lines = [];
    const text = keepTail(lines.join('\n'), this.options.maxChars, Number.MAX_SAFE_INTEGER);
    this.lastSentAt = this.now();
    let delivered: boolean;
    try {
      delivered = await this.options.send(text);
    } catch {
      delivered = true; // a refused update is not retried: the next lines bring news anyway
    }
    if (delivered) this.sent += 1;
    else if (!this.closed) this.lines = [...lines, ...this.lines];
  }
}
