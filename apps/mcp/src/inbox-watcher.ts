import { LiveInbox, OPEN_STATES, type RelayClient, type TaskListItem } from '@app/relay-client';

export const INBOX_URI = 'agentrelay://inbox';

export interface InboxSnapshot {
  /** Open tasks addressed to this agent (pending, accepted, input_required), newest first. */
  tasks: TaskListItem[];
  total_unread: number;
  checked_at: string;
}

/** What identifies a change: a task appearing or leaving, changing state, or getting new messages. */
function fingerprint(tasks: TaskListItem[]): string {
  return tasks
    .map((task) => `${task.task_id}:${task.status.state}:${task.updated_at}:${task.unread_messages}`)
    .sort()
    .join('|');
}

/**
 * The inbox as a subscribable resource. While a client is subscribed the watcher follows the
 * relay's live inbox (`tasks/watch`) and, on each event (or every `intervalMs` while that stream
 * is down), reads `tasks/list` and calls `onChange` when the open tasks differ from the last look.
 * Given a `sharedLive` inbox that someone else keeps open, it follows that one instead of opening
 * its own stream.
 */
export class InboxWatcher {
  private subscribed = false;
  private live: LiveInbox | null = null;
  private watching: AbortController | null = null;
  private lastFingerprint: string | null = null;
  private polling: Promise<void> | null = null;

  constructor(
    private readonly client: RelayClient,
    private readonly intervalMs: number,
    private readonly onChange: () => Promise<void>,
    private readonly onPollError: (error: unknown) => void,
    private readonly sharedLive: LiveInbox | null = null,
  ) {}

  async read(): Promise<InboxSnapshot> {
    const tasks = await this.client.listAllTasks({ role: 'recipient', status: [...OPEN_STATES], limit: 200 });
    return { tasks, total_unread: tasks.reduce((sum, task) => sum + task.unread_messages, 0), checked_at: new Date().toISOString() };
  }

  get isSubscribed(): boolean {
    return this.subscribed;
  }

  /** Starts watching; the inbox as it is now is the baseline, so only later changes notify. */
  async subscribe(): Promise<void> {
    if (this.subscribed) return;
    this.subscribed = true;
    const live = this.sharedLive ?? new LiveInbox(this.client, this.intervalMs, this.onPollError);
    const watching = new AbortController();
    this.live = live;
    this.watching = watching;
    live.start();
    await live.opened(5000);
    try {
      this.lastFingerprint = fingerprint((await this.read()).tasks);
    } catch (error) {
      this.onPollError(error);
    }
    this.schedule(live, watching.signal);
  }

  unsubscribe(): void {
    this.subscribed = false;
    this.lastFingerprint = null;
    this.watching?.abort();
    this.watching = null;
    if (this.live !== this.sharedLive) this.live?.stop();
    this.live = null;
  }

  /** Looks at once (after this server changed a task itself) instead of waiting for the next poll. */
  checkNow(): Promise<void> {
    if (!this.subscribed) return Promise.resolve();
    this.polling ??= this.poll().finally(() => (this.polling = null));
    return this.polling;
  }

  /** Looks again after each live inbox event, or after `intervalMs` while its stream is down, until unsubscribed. */
  private schedule(live: LiveInbox, signal: AbortSignal): void {
    void (async () => {
      while (!signal.aborted) {
        await live.changed(this.intervalMs, signal);
        if (signal.aborted) return;
        await this.checkNow();
      }
    })();
  }

  private async poll(): Promise<void> {
    let current: string;
    try {
      current = fingerprint((await this.read()).tasks);
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
