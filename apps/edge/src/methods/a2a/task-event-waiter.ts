import { Inject, Injectable } from '@nestjs/common';
import { TaskEventFeed } from '../../streams/task-event-feed';

type Listener = () => void;

/**
 * Wakes blocking A2A sends when their task changes, from the edge's one feed of task events
 * (`TaskEventFeed`), whichever edge replica the change went through. Waiters re-read the task when
 * woken, so an event only has to say "task X changed".
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
    const stopFollowing = this.feed.followTask(taskId, () => listener());
    return () => {
      stopFollowing();
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(taskId) === set) this.listeners.delete(taskId);
    };
  }

  /**
   * Calls `check` until it returns a value or `deadline` (epoch ms) passes: once right away (after
   * listening, so no change between the caller's last read and now is missed), then after each
   * event of the task. Returns undefined on the deadline.
   */
  async waitFor<T>(taskId: string, deadline: number, check: () => Promise<T | undefined>): Promise<T | undefined> {
    const signal: { changed: boolean; wake?: () => void } = { changed: false };
    const listener: Listener = () => {
      signal.changed = true;
      signal.wake?.();
    };
    const removeListener = this.addListener(taskId, listener);
    try {
      for (;;) {
        signal.changed = false;
        const result = await check();
        if (result !== undefined) return result;
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
      removeListener();
    }
  }
}
