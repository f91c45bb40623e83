import { describe, expect, it } from '@jest/globals';
import type { AdminTaskRow, LiveTaskEvent } from '../api/types';
import { applyLiveEvent } from './live-rows';

const row = (id: string, updatedAt: string): AdminTaskRow => ({
  id,
  context_id: `ctx-${id}`,
  state: 'pending',
  intent: 'inform',
  summary: `task ${id}`,
  sender: { handle: 'bob@acme', name: 'Bob' },
  recipient: { handle: 'frank@acme', name: 'Frank' },
  message_count: 1,
  artifact_count: 0,
  created_at: updatedAt,
  updated_at: updatedAt,
  status_timestamp: updatedAt,
});

const event = (taskId: string, at: string, state: LiveTaskEvent['state']): LiveTaskEvent => ({
  position: '1',
  event: state === 'pending' ? 'created' : state === 'cancelled' ? 'canceled' : state,
  task_id: taskId,
  state,
  intent: 'inform',
  summary: '',
  sender: 'bob@acme',
  recipient: 'frank@acme',
  at,
});

describe('a live event on the loaded pages', () => {
  const pages = [
    { items: [row('b', '2026-01-01T10:01:00Z')], next_cursor: 'c1' },
    { items: [row('a', '2026-01-01T10:00:00Z')], next_cursor: null },
  ];

  it('changes the state of its task in place, on whichever page it is', () => {
    const { pages: updated, unseenTask } = applyLiveEvent(pages, event('a', '2026-01-01T10:05:00Z', 'accepted'));
    expect(unseenTask).toBe(false);
    expect(updated[1].items[0]).toMatchObject({
      id: 'a',
      state: 'accepted',
      updated_at: '2026-01-01T10:05:00Z',
      status_timestamp: '2026-01-01T10:05:00Z',
      summary: 'task a',
    });
    expect(updated[0].items[0].state).toBe('pending');
  });

  it('ignores an event older than the row it would change', () => {
    const { pages: updated } = applyLiveEvent(pages, event('b', '2026-01-01T09:00:00Z', 'completed'));
    expect(updated[0].items[0].state).toBe('pending');
  });

  it('says when the event is about a task the pages do not hold', () => {
    const { pages: updated, unseenTask } = applyLiveEvent(pages, event('z', '2026-01-01T10:06:00Z', 'pending'));
    expect(unseenTask).toBe(true);
    expect(updated).toBe(pages);
  });
});
