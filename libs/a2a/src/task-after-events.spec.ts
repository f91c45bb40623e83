import {
  isTerminalState,
  type ArtifactView,
  type MessageView,
  type TaskEvent,
  type TaskEventArtifact,
  type TaskEventMessage,
  type TaskState,
  type TaskView,
} from '@app/contracts';
import { taskAfterEvents } from './task-after-events';

const settles = (state: TaskState): boolean => isTerminalState(state) || state === 'input_required';

const firstMessage: MessageView = {
  id: 'm-1',
  sequence_no: 1,
  from: 'bob@acme',
  author: 'sender',
  body: 'Review it',
  parts: [{ kind: 'text', text: 'Review it' }],
  payload: {},
  created_at: '2026-01-01T12:00:00.000Z',
};

const notes: ArtifactView = {
  artifact_id: 'notes',
  type: null,
  fields: {},
  name: 'notes',
  description: null,
  parts: [{ kind: 'text', text: 'a' }],
  metadata: { k: 1 },
};

/** The task as the create's reply gives it: pending, one message. */
function created(overrides: Partial<TaskView> = {}): TaskView {
  return {
    id: 'T1',
    context_id: 'ctx-1',
    state: 'pending',
    intent: 'ask_question',
    summary: 'Review it',
    sender: { id: 's', handle: 'bob@acme', name: 'Bob', role: null },
    recipient: { id: 'r', handle: 'frank@acme', name: 'Frank', role: null },
    proposed_action: null,
    artifacts: [],
    messages: [firstMessage],
    message_count: 1,
    unread_messages: 0,
    result_summary: null,
    reason: null,
    metadata: { from: 'client' },
    accepted_at: null,
    completed_at: null,
    cancelled_at: null,
    failed_at: null,
    rejected_at: null,
    created_at: '2026-01-01T12:00:00.000Z',
    updated_at: '2026-01-01T12:00:00.000Z',
    status_timestamp: '2026-01-01T12:00:00.000Z',
    hold: null,
    tool_prompts: null,
    chain: { parent_task_id: null, root_task_id: 'T1', depth: 0 },
    ...overrides,
  };
}

const answer: TaskEventMessage = { id: 'm-2', sequence_no: 2, from: 'frank@acme', body: 'Done', parts: [{ kind: 'text', text: 'Done' }], payload: { x: 1 } };

function event(id: string, overrides: Partial<TaskEvent> & { message_count?: number; latest?: TaskEventMessage | null }): TaskEvent {
  const { message_count: messageCount = 1, latest = null, ...fields } = overrides;
  return {
    schema_version: 1,
    event_id: id,
    type: 'accepted',
    task_id: 'T1',
    context_id: 'ctx-1',
    sender: 'bob@acme',
    recipient: 'frank@acme',
    state: 'accepted',
    sequence_no: latest?.sequence_no ?? null,
    occurred_at: '2026-01-01T12:00:01.000Z',
    task: { intent: 'ask_question', summary: 'Review it', message_count: messageCount, latest_message: latest, result_summary: null, reason: null },
    ...fields,
  };
}

function artifactEvent(id: string, artifact: TaskEventArtifact, messageCount = 2): TaskEvent {
  return event(id, { type: 'artifact_updated', state: 'completed', message_count: messageCount, artifact });
}

/** An upstream's finished answer as one commit publishes it: its artifact, then accepted and completed, both carrying the answer. */
function finishedAnswer(): TaskEvent[] {
  return [
    artifactEvent('e-2', { ...notes, append: false, last_chunk: true }),
    event('e-3', { type: 'accepted', state: 'completed', message_count: 2, latest: answer, occurred_at: '2026-01-01T12:00:02.000Z' }),
    event('e-4', { type: 'completed', state: 'completed', message_count: 2, latest: answer, occurred_at: '2026-01-01T12:00:02.000Z' }),
  ];
}

describe('taskAfterEvents', () => {
  it('makes the settled task from the reply and the events after it: state, when it began, every message in order, the artifacts', () => {
    const heard = [event('e-1', { type: 'created', state: 'pending', latest: { ...firstMessage, parts: firstMessage.parts } }), ...finishedAnswer()];
    const task = taskAfterEvents(created(), heard, settles);
    expect(task).toEqual({
      ...created(),
      state: 'completed',
      status_timestamp: '2026-01-01T12:00:02.000Z',
      messages: [
        firstMessage,
        {
          id: 'm-2',
          sequence_no: 2,
          from: 'frank@acme',
          author: 'recipient',
          body: 'Done',
          parts: [{ kind: 'text', text: 'Done' }],
          payload: { x: 1 },
          created_at: '2026-01-01T12:00:02.000Z',
        },
      ],
      artifacts: [notes],
    });
  });

  it('counts an event heard twice once, and leaves out the events of other tasks and those after the one that settles it', () => {
    const [artifact, accepted, completed] = finishedAnswer();
    const other = event('e-9', { task_id: 'T2', type: 'completed', state: 'completed', message_count: 5, latest: { ...answer, sequence_no: 5 } });
    const later = event('e-5', { type: 'message_appended', state: 'completed', message_count: 3, latest: { ...answer, id: 'm-3', sequence_no: 3 } });
    const task = taskAfterEvents(created(), [artifact, other, artifact, accepted, accepted, completed, later], settles);
    expect(task?.messages.map((message) => message.id)).toEqual(['m-1', 'm-2']);
    expect(task?.artifacts).toEqual([notes]);
  });

  it('applies artifacts as the tasks service stores them: a chunk appended to its parts and metadata, a replacement in its place', () => {
    const start = created({ state: 'accepted', artifacts: [notes, { ...notes, artifact_id: 'log', parts: [] }] });
    const task = taskAfterEvents(
      start,
      [
        artifactEvent('e-1', { ...notes, parts: [{ kind: 'text', text: 'b' }], metadata: { more: true }, append: true, last_chunk: false }, 1),
        artifactEvent(
          'e-2',
          { ...notes, artifact_id: 'log', name: 'log v2', parts: [{ kind: 'text', text: 'l' }], metadata: {}, append: false, last_chunk: true },
          1,
        ),
        artifactEvent('e-3', { ...notes, artifact_id: 'extra', append: false, last_chunk: true }, 1),
        event('e-4', { type: 'completed', state: 'completed' }),
      ],
      settles,
    );
    expect(task?.artifacts).toEqual([
      {
        ...notes,
        parts: [
          { kind: 'text', text: 'a' },
          { kind: 'text', text: 'b' },
        ],
        metadata: { k: 1, more: true },
      },
      { ...notes, artifact_id: 'log', name: 'log v2', parts: [{ kind: 'text', text: 'l' }], metadata: {} },
      { ...notes, artifact_id: 'extra' },
    ]);
    expect(start.artifacts[0].parts).toEqual([{ kind: 'text', text: 'a' }]);
  });

  it('waits for input as the input_required event says', () => {
    const question = { ...answer, body: 'Which branch?', parts: [{ kind: 'text' as const, text: 'Which branch?' }] };
    const task = taskAfterEvents(created(), [event('e-1', { type: 'input_required', state: 'input_required', message_count: 2, latest: question })], settles);
    expect(task?.state).toBe('input_required');
    expect(task?.messages.at(-1)?.body).toBe('Which branch?');
  });

  it.each<[string, () => [TaskView, TaskEvent[]]]>([
    ['no event settles the task', () => [created(), [event('e-1', { type: 'accepted', state: 'accepted' })]]],
    [
      'a message is missing between the reply and the settling event',
      () => [created(), [event('e-1', { type: 'completed', state: 'completed', message_count: 3, latest: { ...answer, sequence_no: 3 } })]],
    ],
    [
      "an event's message came without its parts",
      () => [created(), [event('e-1', { type: 'completed', state: 'completed', message_count: 2, latest: { ...answer, parts: undefined } })]],
    ],
    [
      'a chunk is appended to an artifact not held',
      () => [created(), [artifactEvent('e-1', { ...notes, append: true, last_chunk: true }), ...finishedAnswer().slice(1)]],
    ],
    ["only the events of the settling commit before the state's own were heard", () => [created(), finishedAnswer().slice(0, 2)]],
    ['the reply held only part of the history', () => [created({ message_count: 2 }), finishedAnswer()]],
    [
      'the task has tool prompts, which people answer without a task event',
      () => [created({ tool_prompts: { answered_by: 'approvers', rule: 'r', four_eyes: false, answers: [] } }), finishedAnswer()],
    ],
  ])('gives nothing, so the task is read, when %s', (_case, given) => {
    const [start, events] = given();
    expect(taskAfterEvents(start, events, settles)).toBeNull();
  });
});
