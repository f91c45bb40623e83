/**
 * How far the outbox relay is behind the creates: a core NATS subscription to the relay's
 * `created` events notes when each task's event reaches the stream, so a create window can tell
 * commit (the create's reply) → published, and how many of its events were still unpublished
 * when its load ended. It notes the `completed` events too (the `upstream` scenario's stages).
 */
import { performance } from 'node:perf_hooks';
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { NatsServers } from '@app/config';
import { prefixedSubject } from '@app/contracts';
import { natsConnectOptions } from '@app/messaging';
import { sleep } from './load-generator';
import { summarizeLatencies } from './stats';

/** The events figure of one create window. */
export interface EventLag {
  /** Commit (the create's reply) → the event on the stream, ms. */
  p50: number;
  p99: number;
  max: number;
  /** The window's events not on the stream yet when its last create answered. */
  backlog: number;
  /** The window's events that never arrived within the wait. */
  lost: number;
}

/** Tasks remembered at most; older ones are dropped (a window only looks at its own). */
const MAX_REMEMBERED = 200_000;

/** The event types whose arrival is noted, per task. */
export type WatchedEvent = 'created' | 'completed';

export class EventWatch {
  private readonly publishedAt = new Map<string, number>();
  private readonly completedAt = new Map<string, number>();

  private constructor(
    private readonly connection: NatsConnection,
    private readonly subscription: Subscription,
    private readonly completions: Subscription,
  ) {}

  /** `nats`: NATS_URL, or the servers with the bench's own credentials and TLS (`--nats secure`). */
  static async start(nats: string | NatsServers, subjectPrefix: string): Promise<EventWatch> {
    const connection = await connect({ ...natsConnectOptions(nats), name: 'bench-event-watch' });
    const subscription = connection.subscribe(prefixedSubject(subjectPrefix, 'relay.events.task.created'));
    const completions = connection.subscribe(prefixedSubject(subjectPrefix, 'relay.events.task.completed'));
    const watch = new EventWatch(connection, subscription, completions);
    void watch.follow(subscription, watch.publishedAt);
    void watch.follow(completions, watch.completedAt);
    await connection.flush();
    return watch;
  }

  private async follow(subscription: Subscription, arrivals: Map<string, number>): Promise<void> {
    for await (const message of subscription) {
      const at = performance.now();
      try {
        const taskId = (message.json() as { task_id?: unknown }).task_id;
        if (typeof taskId !== 'string' || arrivals.has(taskId)) continue;
        if (arrivals.size >= MAX_REMEMBERED) arrivals.delete(arrivals.keys().next().value as string);
        arrivals.set(taskId, at);
      } catch {
        // not a task event: ignored
      }
    }
  }

  /** When a task's event of this type reached the stream (epoch ms), if it did. */
  arrivedAt(type: WatchedEvent, taskId: string): number | undefined {
    const at = (type === 'created' ? this.publishedAt : this.completedAt).get(taskId);
    return at === undefined ? undefined : performance.timeOrigin + at;
  }

  /**
   * The events figure of a window whose creates committed at `committedAt` (task id → reply
   * time) and whose load ended at `endedAt`; waits up to `waitMs` for the stragglers.
   */
  async lag(committedAt: ReadonlyMap<string, number>, endedAt: number, waitMs: number): Promise<EventLag> {
    const backlog = [...committedAt.keys()].filter((id) => !((this.publishedAt.get(id) ?? Infinity) <= endedAt)).length;
    const deadline = performance.now() + waitMs;
    while ([...committedAt.keys()].some((id) => !this.publishedAt.has(id)) && performance.now() < deadline) await sleep(25);
    const latencies: number[] = [];
    for (const [id, at] of committedAt) {
      const published = this.publishedAt.get(id);
      if (published !== undefined) latencies.push(Math.max(0, published - at));
    }
    const summary = summarizeLatencies(latencies);
    return { p50: summary.p50, p99: summary.p99, max: summary.max, backlog, lost: committedAt.size - latencies.length };
  }

  async stop(): Promise<void> {
    this.subscription.unsubscribe();
    this.completions.unsubscribe();
    await this.connection.drain().catch(() => undefined);
  }
}
