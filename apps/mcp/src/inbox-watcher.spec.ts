import { LiveInbox, type InboxEvent, type RelayClient, type TaskListItem } from '@app/relay-client';
import { eventually } from '../../../test/support/eventually';
import { InboxWatcher } from './inbox-watcher';

function item(taskId: string, state: TaskListItem['status']['state'], unread: number, updatedAt = '2026-01-01T00:00:00Z'): TaskListItem {
  return {
    task_id: taskId,
    thread_id: taskId,
    status: { state },
    sender: { handle: 'bob@acme', name: 'Bob', role: null },
    summary_preview: `About ${taskId}`,
    intent: 'inform',
    unread_messages: unread,
    created_at: '2026-01-01T00:00:00Z',
    updated_at: updatedAt,
  };
}

/** A live inbox that stays open without an event until the watcher lets go of it. */
function quietLiveInbox(options: { signal?: AbortSignal } = {}): AsyncIterable<never> {
  const closed = new Promise<IteratorResult<never>>((resolve) => {
    const end = (): void => resolve({ done: true, value: undefined });
    if (options.signal?.aborted) end();
    else options.signal?.addEventListener('abort', end, { once: true });
  });
  return { [Symbol.asyncIterator]: () => ({ next: () => closed }) };
}

describe('InboxWatcher', () => {
  let inbox: TaskListItem[];
  let listCalls: number;
  let changes: number;
  let watcher: InboxWatcher;

  beforeEach(() => {
    inbox = [item('T1', 'pending', 1)];
    listCalls = 0;
    changes = 0;
    const client = {
      listAllTasks: async () => {
        listCalls++;
        return inbox.map((entry) => ({ ...entry }));
      },
      watchInbox: quietLiveInbox,
    } as unknown as RelayClient;
    watcher = new InboxWatcher(
      client,
      60_000,
      async () => void changes++,
      () => undefined,
    );
  });

  afterEach(() => watcher.unsubscribe());

  it('reads the open tasks with the total of unread messages', async () => {
    inbox.push(item('T2', 'accepted', 2));
    const snapshot = await watcher.read();
    expect(snapshot.tasks.map((task) => task.task_id)).toEqual(['T1', 'T2']);
    expect(snapshot.total_unread).toBe(3);
  });

  it('takes the inbox at subscription as the baseline and notifies on each later change only', async () => {
    await watcher.subscribe();
    await watcher.checkNow();
    expect(changes).toBe(0);

    inbox.push(item('T2', 'pending', 1));
    await watcher.checkNow();
    expect(changes).toBe(1);

    inbox[0] = item('T1', 'accepted', 0, '2026-01-01T00:01:00Z');
    await watcher.checkNow();
    expect(changes).toBe(2);

    inbox.splice(1, 1);
    await watcher.checkNow();
    expect(changes).toBe(3);

    await watcher.checkNow();
    expect(changes).toBe(3);
  });

  it('does not poll while nobody is subscribed', async () => {
    await watcher.checkNow();
    expect(listCalls).toBe(0);
    await watcher.subscribe();
    watcher.unsubscribe();
    inbox.push(item('T3', 'pending', 1));
    await watcher.checkNow();
    expect(changes).toBe(0);
    expect(listCalls).toBe(1);
  });

  it('reports a change notification that fails instead of rejecting the check', async () => {
    const errors: unknown[] = [];
    const failing = new InboxWatcher(
      { listAllTasks: async () => inbox.map((entry) => ({ ...entry })), watchInbox: quietLiveInbox } as unknown as RelayClient,
      60_000,
      async () => {
        throw new Error('transport closed');
      },
      (error) => errors.push(error),
    );
    await failing.subscribe();
    inbox.push(item('T4', 'pending', 1));
    try {
      await expect(failing.checkNow()).resolves.toBeUndefined();
      expect(errors).toEqual([new Error('transport closed')]);
    } finally {
      failing.unsubscribe();
    }
  });

  it('follows a shared live inbox without closing it when the client unsubscribes', async () => {
    let push: ((event: InboxEvent) => void) | null = null;
    let watches = 0;
    const client = {
      listAllTasks: async () => inbox.map((entry) => ({ ...entry })),
      async *watchInbox(options: { signal?: AbortSignal; onOpen?: () => void }): AsyncGenerator<InboxEvent> {
        watches++;
        options.onOpen?.();
        const queue: InboxEvent[] = [];
        let wake: (() => void) | null = null;
        push = (event) => {
          queue.push(event);
          wake?.();
        };
        options.signal?.addEventListener('abort', () => wake?.(), { once: true });
        while (!options.signal?.aborted) {
          const next = queue.shift();
          if (next) yield next;
          else await new Promise<void>((resolve) => (wake = resolve));
        }
      },
    } as unknown as RelayClient;
    const live = new LiveInbox(client, 60_000);
    live.start();
    const shared = new InboxWatcher(
      client,
      60_000,
      async () => void changes++,
      () => undefined,
      live,
    );
    try {
      await shared.subscribe();
      inbox.push(item('T5', 'pending', 1));
      push!({ id: '1', event: 'created', task_id: 'T5' });
      await eventually(() => expect(changes).toBe(1));

      shared.unsubscribe();
      expect(live.isConnected).toBe(true);
      await shared.subscribe();
      inbox.push(item('T6', 'pending', 1));
      push!({ id: '2', event: 'created', task_id: 'T6' });
      await eventually(() => expect(changes).toBe(2));
      expect(watches).toBe(1);
    } finally {
      shared.unsubscribe();
      live.stop();
    }
  });
});
