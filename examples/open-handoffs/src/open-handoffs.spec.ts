import type { AdminTaskRow, TaskEvent, TaskEventType, TaskState } from '@app/contracts';
import { OpenHandoffsTable } from './open-handoffs';

function event(taskId: string, type: TaskEventType, state: TaskState, at: string, recipient = 'bob@acme'): TaskEvent {
  return {
    schema_version: 1,
    event_id: `${taskId}-${type}-${at}`,
    type,
    task_id: taskId,
    context_id: 'c',
    sender: 'alice@acme',
    recipient,
    state,
    sequence_no: null,
    occurred_at: at,
    task: { intent: 'inform', summary: `Summary of ${taskId}`, message_count: 1, latest_message: null, result_summary: null, reason: null },
  };
}

describe('the open handoffs of every agent', () => {
  it('keeps a task in its recipient’s table while it is open, with its newest state, and drops it when it ends', () => {
    const table = new OpenHandoffsTable();
    table.apply(event('T1', 'created', 'pending', '2026-01-01T00:00:01.000Z'));
    table.apply(event('T2', 'created', 'pending', '2026-01-01T00:00:02.000Z'));
    table.apply(event('T3', 'created', 'pending', '2026-01-01T00:00:03.000Z', 'carol@acme'));
    table.apply(event('T1', 'accepted', 'accepted', '2026-01-01T00:00:04.000Z'));
    table.apply(event('T2', 'canceled', 'cancelled', '2026-01-01T00:00:05.000Z'));
    table.apply(event('T9', 'completed', 'completed', '2026-01-01T00:00:06.000Z'));
    expect(table.toJSON()).toEqual({
      'bob@acme': [{ task_id: 'T1', sender: 'alice@acme', state: 'accepted', summary: 'Summary of T1', updated_at: '2026-01-01T00:00:04.000Z' }],
      'carol@acme': [{ task_id: 'T3', sender: 'alice@acme', state: 'pending', summary: 'Summary of T3', updated_at: '2026-01-01T00:00:03.000Z' }],
    });
  });

  it('starts from a snapshot row and follows the events after it', () => {
    const table = new OpenHandoffsTable();
    table.fromSnapshot({
      id: 'T1',
      context_id: 'c',
      state: 'input_required',
      intent: 'inform',
      summary: 'Old one',
      sender: { handle: 'alice@acme', name: 'Alice' },
      recipient: { handle: 'bob@acme', name: 'Bob' },
      message_count: 3,
      artifact_count: 0,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:09.000Z',
      status_timestamp: '2026-01-01T00:00:09.000Z',
      last_event_position: '42',
    } satisfies AdminTaskRow);
    expect(table.toJSON()['bob@acme'][0].state).toBe('input_required');
    table.apply(event('T1', 'completed', 'completed', '2026-01-01T00:00:10.000Z'));
    expect(table.toJSON()).toEqual({});
  });
});
