import type { RelayClient, TaskListItem, TaskPage } from '@app/relay-client';
import { OwnHandle } from './own-handle';

function sentTask(sender: string): TaskListItem {
  return {
    task_id: 'T0',
    thread_id: 'T0',
    status: { state: 'pending' },
    sender: { handle: sender, name: sender, role: null },
    summary_preview: 'x',
    intent: 'inform',
    unread_messages: 0,
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
  };
}

function clientSending(items: TaskListItem[]): { client: Pick<RelayClient, 'listTasks'>; calls: () => number } {
  let calls = 0;
  return {
    client: {
      listTasks: async (filter) => {
        calls += 1;
        expect(filter).toEqual({ role: 'sender', limit: 1 });
        return { items, next_cursor: null } satisfies TaskPage;
      },
    },
    calls: () => calls,
  };
}

describe('OwnHandle', () => {
  it('is the sender of the tasks the agent sent, asked once', async () => {
    const relay = clientSending([sentTask('frank@acme')]);
    const own = new OwnHandle(relay.client);
    expect(await own.of({ sender: 'bob@acme', recipient: 'frank@acme' })).toBe('frank@acme');
    expect(await own.of({ sender: 'frank@acme', recipient: 'carol@acme' })).toBe('frank@acme');
    expect(relay.calls()).toBe(1);
  });

  it('is the recipient of the event when the agent has sent nothing', async () => {
    const relay = clientSending([]);
    const own = new OwnHandle(relay.client);
    expect(await own.of({ sender: 'bob@acme', recipient: 'frank@acme' })).toBe('frank@acme');
    expect(own.known).toBe('frank@acme');
  });

  it('needs no call for a task the agent sent itself', async () => {
    const relay = clientSending([]);
    const own = new OwnHandle(relay.client);
    expect(await own.of({ sender: 'frank@acme', recipient: 'frank@acme' })).toBe('frank@acme');
    expect(relay.calls()).toBe(0);
  });
});
