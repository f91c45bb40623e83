import { Inject, Injectable } from '@nestjs/common';
import type { TaskEvent } from '@app/contracts';
import { TaskEventFeed } from '../../streams/task-event-feed';

type Listener = (event: TaskEvent) => void;

/** Which events of the task wake a wait (each wake re-reads the task). */
export type WakesOn = (event: TaskEvent) => boolean;

export interface WaitOptions {
  /** Only these events of the task wake the wait (default: every one). */
  wakes?: WakesOn;
  /** Whether to check once before any event (default: yes); no only when nothing that wakes it can have been missed. */
  checkFirst?: boolean;
}

/** The events of an agent's tasks heard from before a send went out, until it stops. */
export interface EventsAhead {
  /** Whether an event of `taskId` that `wakes` was heard (also when too many were heard to keep). */
  heard(taskId: string, wakes: WakesOn): boolean;
  /** Every event of `taskId` heard, in order; null when some may have been missed (too many to keep, or the connection was lost meanwhile). */
  eventsOf(taskId: string): TaskEvent[] | null;
  stop(): void;
}

/** More events than a send takes to answer: past it, `heard` answers yes. */
const MAX_EVENTS_AHEAD = 1000;

/**
 * Wakes blocking A2A sends when their task changes, from the edge's one feed of task events
 * (`TaskEventFeed`), whichever edge replica the change went through. A waiter woken makes the task
 * from the events it heard when they say it all (`EventsAhead.eventsOf`), else reads it again.
 */
@Injectable()
export class TaskEventWaiter {
  private readonly listeners = new Map<string, Set<Listener>>();

  constructor(@Inject(TaskEventFeed) private readonly feed: TaskEventFeed) {}

  /** How many waits are listening right now (read-only; for tests and diagnostics). */
  get activeListeners(): number {
    let count = 0;
    for (const set of this.listeners.values()) count += set.size;
    return count;
  }

  private addListener(taskId: string, listener: Listener): () => void {
    const set = this.listeners.get(taskId) ?? new Set<Listener>();
    set.add(listener);
    this.listeners.set(taskId, set);
    const stopFollowing = this.feed.followTask(taskId, (item) => listener(item.event));
    return () => {
      stopFollowing();
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(taskId) === set) this.listeners.delete(taskId);
    };
  }

  /**
   * Listens to the events of the tasks agent `handle` takes part in, from now on: started before a
   * send's request goes out, it hears every event committed after the send (the feed subscribes on
   * the connection the request then takes), so a wait for the send's task that starts once the
   * reply is in needs no first read unless an event that wakes it was heard meanwhile.
   */
  listenAhead(handle: string): EventsAhead {
    const heard: TaskEvent[] = [];
    let overflowed = false;
    let reconnected = false;
    const stopFollowing = this.feed.followAgent(handle, (item) => {
      if (heard.length < MAX_EVENTS_AHEAD) heard.push(item.event);
      else overflowed = true;
    });
    const stopResync = this.feed.onReconnect(() => {
      reconnected = true;
    });
    return {
      heard: (taskId, wakes) => overflowed || heard.some((event) => event.task_id === taskId && wakes(event)),
      eventsOf: (taskId) => (overflowed || reconnected ? null : heard.filter((event) => event.task_id === taskId)),
      stop: () => {
        stopFollowing();
        stopResync();
      },
    };
  }

  /**
   * Calls `check` until it returns a value or `deadline` (epoch ms) passes: once right away (after
   * listening, so no change between the caller's last read and now is missed) unless `checkFirst`
   * is false, then after each event of the task that `wakes` it, and after the feed reconnected.
   * Returns undefined on the deadline.
   */
  async waitFor<T>(taskId: string, deadline: number, check: () => Promise<T | undefined>, options: WaitOptions = {}): Promise<T | undefined> {
    const wakes = options.wakes;
    const signal: { changed: boolean; wake?: () => void } = { changed: false };
    const listener: Listener = (event) => {
      if (wakes && !wakes(event)) return;
      signal.changed = true;
      signal.wake?.();
    };
    const removeListener = this.addListener(taskId, listener);
    // Core NATS does not replay what was published while the connection was down: check again.
    const stopResync = this.feed.onReconnect(() => {
      signal.changed = true;
      signal.wake?.();
    });
    let checkNow = options.checkFirst ?? true;
    try {
      for (;;) {
        if (checkNow) {
          signal.changed = false;
          const result = await check();
          if (result !== undefined) return result;
        }
        checkNow = true;
        const remaining = deadline - Date.now();
        if (remaining <= 0) return undefined;
        if (!signal.changed) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, remaining);
            signal.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          signal.wake = undefined;
        }
        if (!signal.changed) return undefined;
      }
    } finally {
      stopResync();
      removeListener();
    }
  }
}
