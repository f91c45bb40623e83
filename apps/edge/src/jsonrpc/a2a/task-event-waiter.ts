import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { prefixedSubject, TASK_EVENT_SUBJECT_PREFIX, type TaskEvent } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';

type Listener = () => void;

/**
 * Wakes blocking A2A sends when their task changes. One core NATS subscription per edge on
 * `<prefix>.relay.events.task.>` sees every task event the tasks service relays to JetStream,
 * whichever edge replica the change went through. Waiters re-read the task when woken, so an
 * event only has to say "task X changed".
 */
@Injectable()
export class TaskEventWaiter implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(TaskEventWaiter.name);
  private readonly listeners = new Map<string, Set<Listener>>();
  private subscription?: Subscription;

  constructor(@Inject(NatsRpcClient) private readonly rpc: NatsRpcClient) {}

  /** Nothing to set up: the edge listens to task events only while a wait needs them. */
  onModuleInit(): void {}

  onModuleDestroy(): void {
    this.stopListening();
  }

  /**
   * Subscribes to every task event under the prefix when the first listener arrives. The SUB goes
   * out on the connection before any request the listener's caller sends next, so no event of that
   * request is missed; when the last listener leaves, the edge stops receiving events at once.
   */
  private startListening(): void {
    if (this.subscription) return;
    const subject = prefixedSubject(this.rpc.subjectPrefix, `${TASK_EVENT_SUBJECT_PREFIX}.>`);
    this.subscription = this.rpc.connection.subscribe(subject, {
      callback: (error, message) => {
        if (error) {
          this.logger.warn({ err: error }, 'task event subscription error');
          return;
        }
        let taskId: string | undefined;
        try {
          taskId = message.json<Partial<TaskEvent>>().task_id;
        } catch {
          return;
        }
        if (typeof taskId === 'string') this.notify(taskId);
      },
    });
  }

  private stopListening(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }

  private stopListeningWhenIdle(): void {
    if (this.activeListeners === 0) this.stopListening();
  }

  private notify(taskId: string): void {
    const listeners = this.listeners.get(taskId);
    if (!listeners) return;
    for (const listener of [...listeners]) listener();
  }

  /** How many waits are listening right now (read-only; for tests and diagnostics). */
  get activeListeners(): number {
    let count = 0;
    for (const set of this.listeners.values()) count += set.size;
    return count;
  }

  private addListener(taskId: string, listener: Listener): () => void {
    this.startListening();
    const set = this.listeners.get(taskId) ?? new Set<Listener>();
    set.add(listener);
    this.listeners.set(taskId, set);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(taskId) === set) this.listeners.delete(taskId);
      this.stopListeningWhenIdle();
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
