import { OPEN_STATES, type RelayClient, type ThreadListItem } from '@app/relay-client';

export const INBOX_URI = 'agentrelay://inbox';

export interface InboxSnapshot {
  /** Open threads addressed to this agent (pending, accepted, input_required), newest first. */
  threads: ThreadListItem[];
  total_unread: number;
  checked_at: string;
}

/** What identifies a change: a thread appearing or leaving, changing state, or getting new messages. */
function fingerprint(threads: ThreadListItem[]): string {
  return threads
    .map((thread) => `${thread.task_id}:${thread.status.state}:${thread.updated_at}:${thread.unread_messages}`)
    .sort()
    .join('|');
}

/**
 * The inbox as a subscribable resource. The relay has no inbox stream, so while a client is
 * subscribed the watcher polls `tasks/list` and calls `onChange` when the open threads differ
 * from the last look.
 */
export class InboxWatcher {
  private subscribed = false;
  private timer: NodeJS.Timeout | null = null;
  private lastFingerprint: string | null = null;
  private polling: Promise<void> | null = null;

  constructor(
    private readonly client: RelayClient,
    private readonly intervalMs: number,
    private readonly onChange: () => Promise<void>,
    private readonly onPollError: (error: unknown) => void,
  ) {}

  async read(): Promise<InboxSnapshot> {
    const threads = await this.client.listAllThreads({ role: 'recipient', status: [...OPEN_STATES], limit: 200 });
    return { threads, total_unread: threads.reduce((sum, thread) => sum + thread.unread_messages, 0), checked_at: new Date().toISOString() };
  }

  get isSubscribed(): boolean {
    return this.subscribed;
  }

  /** Starts watching; the inbox as it is now is the baseline, so only later changes notify. */
  async subscribe(): Promise<void> {
    if (this.subscribed) return;
    this.subscribed = true;
    try {
      this.lastFingerprint = fingerprint((await this.read()).threads);
    } catch (error) {
      this.onPollError(error);
    }
    this.schedule();
  }

  unsubscribe(): void {
    this.subscribed = false;
    this.lastFingerprint = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Looks at once (after this server changed a thread itself) instead of waiting for the next poll. */
  checkNow(): Promise<void> {
    if (!this.subscribed) return Promise.resolve();
    this.polling ??= this.poll().finally(() => (this.polling = null));
    return this.polling;
  }

  private schedule(): void {
    if (!this.subscribed) return;
    this.timer = setTimeout(() => {
      void this.checkNow().finally(() => this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    let current: string;
    try {
      current = fingerprint((await this.read()).threads);
    } catch (error) {
      this.onPollError(error);
      return;
    }
    if (!this.subscribed) return;
    const changed = this.lastFingerprint !== null && current !== this.lastFingerprint;
    this.lastFingerprint = current;
    if (!changed) return;
    // A notification that cannot be sent (the client went away) is reported, never left to reject
    // the timer's or a tool's fire-and-forget check.
    try {
      await this.onChange();
    } catch (error) {
      this.onPollError(error);
    }
  }
}
