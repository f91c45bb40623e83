import type { TaskEvent } from '@app/contracts';
import { renderPushBody, renderTaskEvent } from './task-event-render';

function event(overrides: Partial<TaskEvent> = {}): TaskEvent {
  return {
    schema_version: 1,
    event_id: 'e-1',
    type: 'message_appended',
    task_id: 'T1',
    context_id: 'ctx-1',
    sender: 'bob@acme',
    recipient: 'frank@acme',
    state: 'accepted',
    sequence_no: 2,
    occurred_at: '2026-01-01T12:00:00.000Z',
    task: {
      intent: 'inform',
      summary: 'Review it',
      message_count: 2,
      latest_message: { id: 'm-2', sequence_no: 2, from: 'frank@acme', body: 'On it', parts: [{ kind: 'text', text: 'On it' }] },
      result_summary: null,
      reason: null,
    },
    ...overrides,
  };
}

describe('renderTaskEvent', () => {
  it('renders a message as a status update carrying it, by the author role, in both versions', () => {
    expect(renderTaskEvent(event(), '1.0', false)).toEqual({
      statusUpdate: {
        taskId: 'T1',
        contextId: 'ctx-1',
        status: {
          state: 'TASK_STATE_WORKING',
          message: { messageId: 'm-2', contextId: 'ctx-1', taskId: 'T1', role: 'ROLE_AGENT', parts: [{ text: 'On it' }] },
          timestamp: '2026-01-01T12:00:00.000Z',
        },
      },
    });
    expect(renderTaskEvent(event(), '0.3', false)).toMatchObject({
      kind: 'status-update',
      status: { state: 'working', message: { kind: 'message', role: 'agent', parts: [{ kind: 'text', text: 'On it' }] } },
      final: false,
    });
  });

  it("leaves a resume's accepted event without the answer its message event carried, and marks the stream's last v0.3 event final", () => {
    const accepted = event({ type: 'accepted', task: { ...event().task, latest_message: { id: 'm-3', sequence_no: 3, from: 'bob@acme', body: 'Yes' } } });
    expect(renderTaskEvent(accepted, '1.0', false)).toEqual({
      statusUpdate: { taskId: 'T1', contextId: 'ctx-1', status: { state: 'TASK_STATE_WORKING', timestamp: '2026-01-01T12:00:00.000Z' } },
    });
    expect(renderTaskEvent(event({ type: 'completed', state: 'completed' }), '0.3', true)).toMatchObject({ status: { state: 'completed' }, final: true });
  });

  it('renders a created event as the Task with its first message as history', () => {
    const created = event({
      type: 'created',
      state: 'pending',
      task: { ...event().task, latest_message: { id: 'm-1', sequence_no: 1, from: 'bob@acme', body: 'Review it' } },
    });
    expect(renderTaskEvent(created, '1.0', false)).toEqual({
      task: {
        id: 'T1',
        contextId: 'ctx-1',
        status: {
          state: 'TASK_STATE_SUBMITTED',
          message: expect.objectContaining({ role: 'ROLE_USER', parts: [{ text: 'Review it' }] }),
          timestamp: created.occurred_at,
        },
        history: [expect.objectContaining({ messageId: 'm-1' })],
        metadata: { relay: { intent: 'inform', sender: 'bob@acme', recipient: 'frank@acme' } },
      },
    });
    expect(renderTaskEvent(created, '0.3', false)).toMatchObject({ kind: 'task', id: 'T1', status: { state: 'submitted' } });
  });

  it('renders artifact chunks with their flags (v1.0 leaves a false append out)', () => {
    const artifact = {
      artifact_id: 'log',
      type: null,
      fields: {},
      name: 'log',
      description: null,
      parts: [{ kind: 'text' as const, text: 'part' }],
      metadata: {},
      append: false,
      last_chunk: false,
    };
    const first = event({ type: 'artifact_updated', artifact });
    expect(renderTaskEvent(first, '1.0', false)).toEqual({
      artifactUpdate: { taskId: 'T1', contextId: 'ctx-1', artifact: { artifactId: 'log', name: 'log', parts: [{ text: 'part' }] }, lastChunk: false },
    });
    const last = event({ type: 'artifact_updated', artifact: { ...artifact, append: true, last_chunk: true } });
    expect(renderTaskEvent(last, '1.0', false)).toMatchObject({ artifactUpdate: { append: true, lastChunk: true } });
    expect(renderTaskEvent(last, '0.3', false)).toEqual({
      kind: 'artifact-update',
      taskId: 'T1',
      contextId: 'ctx-1',
      artifact: { artifactId: 'log', name: 'log', parts: [{ kind: 'text', text: 'part' }] },
      append: true,
      lastChunk: true,
    });
  });
});

describe('renderPushBody', () => {
  const pushed = (type: TaskEvent['type'], state: TaskEvent['state'], from: string | null): TaskEvent =>
    event({
      type,
      state,
      sender: 'alice@acme',
      recipient: 'bob@acme',
      task: {
        intent: 'inform',
        summary: 's',
        message_count: 2,
        latest_message: from ? { id: 'm2', sequence_no: 2, from, body: 'hello' } : null,
        result_summary: null,
        reason: null,
      },
    });

  it('v1.0: task for a new task, message for a message, statusUpdate for a state change', () => {
    expect(renderPushBody(pushed('created', 'pending', 'alice@acme'), '1.0', 'a2a.task.created')).toEqual({
      task: {
        id: 'T1',
        contextId: 'ctx-1',
        status: { state: 'TASK_STATE_SUBMITTED', timestamp: '2026-01-01T12:00:00.000Z' },
        history: [{ messageId: 'm2', taskId: 'T1', contextId: 'ctx-1', role: 'ROLE_USER', parts: [{ text: 'hello' }] }],
      },
    });
    expect(renderPushBody(pushed('message_appended', 'accepted', 'bob@acme'), '1.0', 'a2a.task.message')).toEqual({
      message: { messageId: 'm2', taskId: 'T1', contextId: 'ctx-1', role: 'ROLE_AGENT', parts: [{ text: 'hello' }] },
    });
    expect(renderPushBody(pushed('canceled', 'cancelled', null), '1.0', 'a2a.task.canceled')).toEqual({
      statusUpdate: { taskId: 'T1', contextId: 'ctx-1', status: { state: 'TASK_STATE_CANCELED', timestamp: '2026-01-01T12:00:00.000Z' } },
    });
  });

  it('v0.3: the task object with its lowercase state, naming the event in its metadata', () => {
    expect(renderPushBody(pushed('input_required', 'input_required', null), '0.3', 'a2a.task.input_required')).toEqual({
      kind: 'task',
      id: 'T1',
      contextId: 'ctx-1',
      status: { state: 'input-required', timestamp: '2026-01-01T12:00:00.000Z' },
      metadata: { event: 'a2a.task.input_required', event_id: 'e-1' },
    });
    expect(renderPushBody(pushed('message_appended', 'accepted', 'bob@acme'), '0.3', 'a2a.task.message')).toMatchObject({
      status: { state: 'working' },
      history: [{ kind: 'message', role: 'agent', parts: [{ kind: 'text', text: 'hello' }] }],
    });
  });
});
