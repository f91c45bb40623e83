import { jest } from '@jest/globals';
import { Registry } from 'prom-client';
import { TASK_EVENT_SCHEMA_VERSION, type TaskEvent } from '@app/contracts';
import type { NatsRpcClient } from '@app/messaging';
import { HttpMetrics } from '@app/metrics';
import { IDLE_SUBSCRIPTION_MS, TaskEventFeed } from '../../streams/task-event-feed';
import { TaskEventWaiter } from './task-event-waiter';

type Callback = (error: Error | null, message: { json: <T>() => T; headers: { get: (name: string) => string } }) => void;

/** A task event as the tasks service publishes it, with `fields` in place of the defaults. */
function taskEvent(fields: Partial<TaskEvent>): TaskEvent {
  return {
    schema_version: TASK_EVENT_SCHEMA_VERSION,
    event_id: 'e1',
    type: 'accepted',
    task_id: 'T0',
    context_id: 'C1',
    sender: 'a@x',
    recipient: 'b@x',
    state: 'accepted',
    sequence_no: null,
    occurred_at: '2026-01-01T00:00:00.000Z',
    task: { intent: 'inform', summary: 's', message_count: 1, latest_message: null, result_summary: null, reason: null },
    ...fields,
  };
}

/** A stand-in for the edge's NATS connection that records the subscription and lets the test publish. */
function fakeRpc(): {
  rpc: NatsRpcClient;
  subject: () => string;
  publish: (payload: unknown) => void;
  subscribed: () => boolean;
  subscriptions: () => number;
  /** How many events the feed read (parsed). */
  reads: () => number;
  /** The connection tells it was re-established. */
  reconnect: () => void;
} {
  let callback: Callback | undefined;
  let subject = '';
  let subscribed = false;
  let subscriptions = 0;
  let reads = 0;
  let nextStatus: ((status: { type: string }) => void) | undefined;
  const connection = {
    status: async function* () {
      for (;;) yield await new Promise<{ type: string }>((resolve) => (nextStatus = resolve));
    },
    subscribe: (name: string, options: { callback: Callback }) => {
      subject = name;
      subscribed = true;
      subscriptions += 1;
      callback = options.callback;
      return {
        unsubscribe: () => {
          subscribed = false;
          callback = undefined;
        },
      };
    },
  };
  return {
    rpc: { subjectPrefix: 'pfx', connection } as unknown as NatsRpcClient,
    subject: () => subject,
    publish: (payload) =>
      callback?.(null, {
        json: <T>() => {
          reads += 1;
          return payload as T;
        },
        headers: { get: () => '1' },
      }),
    subscribed: () => subscribed,
    subscriptions: () => subscriptions,
    reads: () => reads,
    reconnect: () => nextStatus?.({ type: 'reconnect' }),
  };
}

describe('TaskEventWaiter', () => {
  it('listens to every task event under the prefix through the task event feed, once for waits one after another, and stops on shutdown', async () => {
    const fake = fakeRpc();
    const feed = new TaskEventFeed(fake.rpc, new HttpMetrics(new Registry()));
    const waiter = new TaskEventWaiter(feed);
    expect(fake.subscribed()).toBe(false);
    await waiter.waitFor('T0', Date.now() + 10, async () => {
      expect(fake.subscribed()).toBe(true);
      return undefined;
    });
    expect(fake.subject()).toBe('pfx.relay.events.task.>');
    expect(feed.stats).toEqual({ subscriptions: 1, listeners: 0 });
    const pending = waiter.waitFor('T1', Date.now() + 50, async () => undefined);
    expect(fake.subscriptions()).toBe(1);
    feed.onModuleDestroy();
    expect(fake.subscribed()).toBe(false);
    fake.publish(taskEvent({ task_id: 'T1' }));
    await expect(pending).resolves.toBeUndefined();
  });

  it('ends the subscription once it had no listener for a while, reading nothing meanwhile, and keeps it for a listener that comes in time', () => {
    jest.useFakeTimers();
    try {
      const fake = fakeRpc();
      const feed = new TaskEventFeed(fake.rpc, new HttpMetrics(new Registry()));
      feed.followTask('T0', () => undefined)();
      jest.advanceTimersByTime(IDLE_SUBSCRIPTION_MS - 1);
      expect(fake.subscribed()).toBe(true);
      fake.publish(taskEvent({ task_id: 'T0' }));
      expect(fake.reads()).toBe(0);
      const heard: string[] = [];
      const stop = feed.followTask('T1', (item) => heard.push(item.event.task_id));
      jest.advanceTimersByTime(IDLE_SUBSCRIPTION_MS * 2);
      fake.publish(taskEvent({ task_id: 'T1' }));
      expect([heard, fake.subscriptions(), fake.reads()]).toEqual([['T1'], 1, 1]);
      stop();
      jest.advanceTimersByTime(IDLE_SUBSCRIPTION_MS);
      expect(feed.stats).toEqual({ subscriptions: 0, listeners: 0 });
      expect(fake.subscribed()).toBe(false);
      feed.followAgent('a@x', () => undefined);
      expect([fake.subscribed(), fake.subscriptions()]).toEqual([true, 2]);
      feed.onModuleDestroy();
      expect(fake.subscribed()).toBe(false);
    } finally {
      jest.useRealTimers();
    }
  });

  it('checks once at once, then again on each event of its task, until the check answers', async () => {
    const fake = fakeRpc();
    const waiter = new TaskEventWaiter(new TaskEventFeed(fake.rpc, new HttpMetrics(new Registry())));
    let state = 'pending';
    let checks = 0;
    const waiting = waiter.waitFor('T1', Date.now() + 5000, async () => {
      checks++;
      return state === 'completed' ? state : undefined;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(checks).toBe(1);
    fake.publish(taskEvent({ task_id: 'other', state: 'completed' }));
    // Not a task event (only the relay may publish on these subjects, but a reader checks): it wakes nobody.
    fake.publish({ task_id: 'T1', state: 'completed' });
    fake.publish(null);
    await new Promise((resolve) => setImmediate(resolve));
    expect(checks).toBe(1);
    state = 'completed';
    fake.publish(taskEvent({ task_id: 'T1', state: 'completed' }));
    await expect(waiting).resolves.toBe('completed');
    expect(checks).toBe(2);
  });

  it('gives up at the deadline', async () => {
    const fake = fakeRpc();
    const waiter = new TaskEventWaiter(new TaskEventFeed(fake.rpc, new HttpMetrics(new Registry())));
    const startedAt = Date.now();
    await expect(waiter.waitFor('T2', Date.now() + 100, async () => undefined)).resolves.toBeUndefined();
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(90);
  });

  it('re-checks when an event arrives while a check is running (no lost wake-up)', async () => {
    const fake = fakeRpc();
    const waiter = new TaskEventWaiter(new TaskEventFeed(fake.rpc, new HttpMetrics(new Registry())));
    let checks = 0;
    const result = await waiter.waitFor('T3', Date.now() + 5000, async () => {
      checks++;
      if (checks === 1) {
        fake.publish(taskEvent({ task_id: 'T3' }));
        return undefined;
      }
      return 'seen';
    });
    expect(result).toBe('seen');
    expect(checks).toBe(2);
  });

  it('with checkFirst false and a wake filter, checks only once an event that wakes it arrives', async () => {
    const fake = fakeRpc();
    const waiter = new TaskEventWaiter(new TaskEventFeed(fake.rpc, new HttpMetrics(new Registry())));
    let checks = 0;
    const waiting = waiter.waitFor(
      'T4',
      Date.now() + 5000,
      async () => {
        checks++;
        return 'done';
      },
      { wakes: (event) => event.state === 'completed', checkFirst: false },
    );
    await new Promise((resolve) => setImmediate(resolve));
    fake.publish(taskEvent({ task_id: 'T4', sender: 'a@x', recipient: 'b@x', state: 'accepted' }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(checks).toBe(0);
    fake.publish(taskEvent({ task_id: 'T4', sender: 'a@x', recipient: 'b@x', state: 'completed' }));
    await expect(waiting).resolves.toBe('done');
    expect(checks).toBe(1);
  });

  it('hears the events of an agent ahead of its send, until stopped', () => {
    const fake = fakeRpc();
    const waiter = new TaskEventWaiter(new TaskEventFeed(fake.rpc, new HttpMetrics(new Registry())));
    const ahead = waiter.listenAhead('a@x');
    const completed = (event: { state: string }): boolean => event.state === 'completed';
    fake.publish(taskEvent({ task_id: 'T5', sender: 'a@x', recipient: 'b@x', state: 'accepted' }));
    fake.publish(taskEvent({ task_id: 'T6', sender: 'c@x', recipient: 'b@x', state: 'completed' }));
    expect(ahead.heard('T5', completed)).toBe(false);
    expect(ahead.heard('T6', completed)).toBe(false);
    fake.publish(taskEvent({ task_id: 'T5', sender: 'a@x', recipient: 'b@x', state: 'completed' }));
    expect(ahead.heard('T5', completed)).toBe(true);
    ahead.stop();
    fake.publish(taskEvent({ task_id: 'T7', sender: 'a@x', recipient: 'b@x', state: 'completed' }));
    expect(ahead.heard('T7', completed)).toBe(false);
  });

  it("gives a task's events heard ahead in order, and none once some may have been missed", async () => {
    const fake = fakeRpc();
    const waiter = new TaskEventWaiter(new TaskEventFeed(fake.rpc, new HttpMetrics(new Registry())));
    const ahead = waiter.listenAhead('a@x');
    fake.publish(taskEvent({ event_id: 'e1', task_id: 'T5', sender: 'a@x', state: 'accepted' }));
    fake.publish(taskEvent({ event_id: 'e2', task_id: 'T6', sender: 'a@x', state: 'accepted' }));
    fake.publish(taskEvent({ event_id: 'e3', task_id: 'T5', sender: 'a@x', state: 'completed' }));
    expect(ahead.eventsOf('T5')?.map((event) => event.event_id)).toEqual(['e1', 'e3']);
    expect(ahead.eventsOf('T9')).toEqual([]);
    // Core NATS does not replay what was published while the connection was down.
    fake.reconnect();
    await new Promise((resolve) => setImmediate(resolve));
    expect(ahead.eventsOf('T5')).toBeNull();
    ahead.stop();

    const crowded = waiter.listenAhead('a@x');
    for (let index = 0; index <= 1000; index += 1) fake.publish(taskEvent({ event_id: `x${index}`, task_id: 'T8', sender: 'a@x' }));
    expect(crowded.eventsOf('T8')).toBeNull();
    crowded.stop();
  });
});
