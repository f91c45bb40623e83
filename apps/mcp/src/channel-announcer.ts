import type { InboxEvent } from '@app/relay-client';
import { announcementOf, channelNotification, type ChannelBurst, type ChannelNotification } from './channel-events';

/** How many event ids the announcer remembers, so that an event replayed after a reconnect is announced once. */
const REMEMBERED_EVENT_IDS = 4096;

export interface ChannelAnnouncerOptions {
  /** The agent's own handle, given an event of one of its tasks. */
  ownHandle: (event: InboxEvent) => Promise<string>;
  send: (notification: ChannelNotification) => Promise<void>;
  /** How long a burst of one task's events is collected into one notification (ms). */
  burstMs: number;
  onError: (error: unknown) => void;
}

interface PendingBurst {
  burst: ChannelBurst;
  timer: NodeJS.Timeout;
}

/**
 * Turns the live inbox into channel notifications: at most one per task per burst of events
 * (`burstMs` after its first announced event, carrying the latest state), none for the agent's
 * own actions, and none twice for an event the stream replays after a reconnect.
 */
export class ChannelAnnouncer {
  private readonly seen = new Set<string>();
  private readonly pending = new Map<string, PendingBurst>();
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: ChannelAnnouncerOptions) {}

  /** Takes one live inbox event; events are looked at one after another, in the order they came. */
  accept(event: InboxEvent): void {
    this.queue = this.queue.then(() => this.look(event)).catch((error: unknown) => this.options.onError(error));
  }

  /** Resolves once every event accepted so far has been looked at. */
  settled(): Promise<void> {
    return this.queue;
  }

  /** Sends nothing more; bursts still collecting are dropped. */
  close(): void {
    this.closed = true;
    for (const { timer } of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
  }

  private async look(event: InboxEvent): Promise<void> {
    if (this.closed || event.event === 'ready' || !event.task_id) return;
    if (event.id) {
      if (this.seen.has(event.id)) return;
      this.seen.add(event.id);
      if (this.seen.size > REMEMBERED_EVENT_IDS) this.seen.delete(this.seen.values().next().value as string);
    }
    const self = await this.options.ownHandle(event);
    if (this.closed) return;
    const taskId = event.task_id;
    const collecting = this.pending.get(taskId);
    if (collecting) collecting.burst.latest = event;
    const announcement = announcementOf(event, self);
    if (announcement === null) return;
    const { kind, from } = announcement;
    if (collecting) {
      const { burst } = collecting;
      burst.events.push(event);
      if (burst.kind !== 'handoff') {
        burst.kind = kind;
        burst.from = from;
      }
      return;
    }
    const burst: ChannelBurst = { taskId, kind, from, events: [event], latest: event };
    const timer = setTimeout(() => this.flush(taskId), this.options.burstMs);
    this.pending.set(taskId, { burst, timer });
  }

  private flush(taskId: string): void {
    const collected = this.pending.get(taskId);
    this.pending.delete(taskId);
    if (!collected || this.closed) return;
    this.options.send(channelNotification(collected.burst)).catch((error: unknown) => this.options.onError(error));
  }
}
