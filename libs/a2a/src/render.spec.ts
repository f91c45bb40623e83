import type { ArtifactView, MessageView, TaskView } from '@app/contracts';
import { renderArtifact, renderMessage, renderSendResult, renderTask, renderTaskPage } from './render';

function message(sequence: number, author: 'sender' | 'recipient', body: string, payload: Record<string, unknown> = {}): MessageView {
  return {
    id: `m-${sequence}`,
    sequence_no: sequence,
    from: author === 'sender' ? 'bob@acme' : 'frank@acme',
    author,
    body,
    parts: [{ kind: 'text', text: body }],
    payload,
    created_at: `2026-04-25T10:0${sequence}:00.000Z`,
  };
}

const typedArtifact: ArtifactView = {
  artifact_id: 'art-1',
  type: 'file_diff',
  fields: { path: 'src/a.ts', diff: '@@' },
  name: null,
  description: null,
  parts: [],
  metadata: {},
};
const standardArtifact: ArtifactView = {
  artifact_id: 'art-2',
  type: null,
  fields: {},
  name: 'report',
  description: 'the report',
  parts: [
    { kind: 'text', text: 'done' },
    { kind: 'file', file: { bytes: 'aGk=', name: 'a.bin', mime_type: 'application/octet-stream' } },
    { kind: 'file', file: { uri: 'https://example.com/r.pdf' } },
    { kind: 'data', data: { ok: true } },
  ],
  metadata: { source: 'ci' },
};

function sampleTask(overrides: Partial<TaskView> = {}): TaskView {
  return {
    id: '01HXYZ4K2VNJQP7R8MWDB3CSTF',
    context_id: 'ctx-1',
    state: 'input_required',
    intent: 'ask_question',
    summary: 'first',
    sender: { id: 's', handle: 'bob@acme', name: 'Bob', role: null },
    recipient: { id: 'r', handle: 'frank@acme', name: 'Frank', role: null },
    proposed_action: null,
    artifacts: [typedArtifact, standardArtifact],
    messages: [message(1, 'sender', 'first', { k: 1 }), message(2, 'recipient', 'which one?'), message(3, 'sender', 'the second')],
    message_count: 3,
    unread_messages: 0,
    result_summary: null,
    reason: null,
    metadata: {},
    accepted_at: null,
    completed_at: null,
    cancelled_at: null,
    failed_at: null,
    rejected_at: null,
    created_at: '2026-04-25T10:01:00.000Z',
    updated_at: '2026-04-25T10:03:00.000Z',
    status_timestamp: '2026-04-25T10:02:00.000Z',
    hold: null,
    tool_prompts: null,
    chain: { parent_task_id: null, root_task_id: '01HXYZ4K2VNJQP7R8MWDB3CSTF', depth: 0 },
    ...overrides,
  };
}

describe('renderTask v0.3', () => {
  const task = renderTask(sampleTask(), '0.3');

  it('uses kind discriminators, lowercase states and roles', () => {
    expect(task).toMatchObject({
      kind: 'task',
      id: '01HXYZ4K2VNJQP7R8MWDB3CSTF',
      contextId: 'ctx-1',
      status: { state: 'input-required', timestamp: '2026-04-25T10:02:00.000Z' },
    });
    const history = task.history as Record<string, unknown>[];
    expect(history.map((entry) => entry.role)).toEqual(['user', 'agent', 'user']);
    expect(history[0]).toEqual({
      kind: 'message',
      messageId: 'm-1',
      contextId: 'ctx-1',
      taskId: '01HXYZ4K2VNJQP7R8MWDB3CSTF',
      role: 'user',
      parts: [{ kind: 'text', text: 'first' }],
      metadata: { k: 1 },
    });
    expect(history[1]).not.toHaveProperty('metadata');
  });

  it('puts the latest message in status.message and relay facts in metadata.relay', () => {
    expect((task.status as Record<string, unknown>).message).toMatchObject({ messageId: 'm-3', role: 'user' });
    expect(task.metadata).toEqual({
      relay: {
        intent: 'ask_question',
        proposedAction: null,
        sender: 'bob@acme',
        recipient: 'frank@acme',
        chain: { parentTaskId: null, rootTaskId: '01HXYZ4K2VNJQP7R8MWDB3CSTF', depth: 0 },
      },
    });
  });

  it('renders a proposed action in camelCase, with no snake_case key anywhere', () => {
    const proposed = renderTask(
      sampleTask({
        intent: 'propose_action',
        proposed_action: { description: 'Read next_cursor', target_files: ['web/Users.tsx'], rationale: 'Paginated now', suggested_diff: '--- a' },
      }),
      '1.0',
    );
    expect((proposed.metadata as Record<string, Record<string, unknown>>).relay.proposedAction).toEqual({
      description: 'Read next_cursor',
      targetFiles: ['web/Users.tsx'],
      rationale: 'Paginated now',
      suggestedDiff: '--- a',
    });
    const keys = JSON.stringify(proposed).match(/"[A-Za-z0-9]+_[A-Za-z0-9_]*":/g);
    expect(keys).toBeNull();
  });

  it('renders typed artifacts as data parts and standard ones as given', () => {
    expect(task.artifacts).toEqual([
      { artifactId: 'art-1', name: 'file_diff', parts: [{ kind: 'data', data: { type: 'file_diff', path: 'src/a.ts', diff: '@@' } }] },
      {
        artifactId: 'art-2',
        name: 'report',
        description: 'the report',
        parts: [
          { kind: 'text', text: 'done' },
          { kind: 'file', file: { name: 'a.bin', mimeType: 'application/octet-stream', bytes: 'aGk=' } },
          { kind: 'file', file: { uri: 'https://example.com/r.pdf' } },
          { kind: 'data', data: { ok: true } },
        ],
        metadata: { source: 'ci' },
      },
    ]);
  });
});

describe('renderTask v1.0', () => {
  it('is ProtoJSON: TASK_STATE_*, ROLE_*, parts without kind', () => {
    const task = renderTask(sampleTask(), '1.0');
    expect(task).not.toHaveProperty('kind');
    expect((task.status as Record<string, unknown>).state).toBe('TASK_STATE_INPUT_REQUIRED');
    const history = task.history as Record<string, unknown>[];
    expect(history.map((entry) => entry.role)).toEqual(['ROLE_USER', 'ROLE_AGENT', 'ROLE_USER']);
    expect(history[0].parts).toEqual([{ text: 'first' }]);
    expect(history[0]).not.toHaveProperty('kind');
    expect((task.artifacts as Record<string, unknown>[])[1].parts).toEqual([
      { text: 'done' },
      { raw: 'aGk=', filename: 'a.bin', mediaType: 'application/octet-stream' },
      { url: 'https://example.com/r.pdf' },
      { data: { ok: true } },
    ]);
  });

  it('wraps the send result as {task} in v1.0 and leaves it bare in v0.3', () => {
    expect(renderSendResult(sampleTask(), '1.0')).toHaveProperty('task.id', '01HXYZ4K2VNJQP7R8MWDB3CSTF');
    expect(renderSendResult(sampleTask(), '0.3')).toHaveProperty('kind', 'task');
  });

  it('applies historyLength: 0 drops history, N keeps the most recent N', () => {
    expect(renderTask(sampleTask(), '1.0', { historyLength: 0 })).not.toHaveProperty('history');
    expect((renderTask(sampleTask(), '1.0', { historyLength: 2 }).history as Record<string, unknown>[]).map((entry) => entry.messageId)).toEqual([
      'm-2',
      'm-3',
    ]);
    expect(renderTask(sampleTask(), '1.0', { historyLength: 10 }).history).toHaveLength(3);
    expect((renderTask(sampleTask(), '1.0', { historyLength: 0 }).status as Record<string, unknown>).message).toMatchObject({ messageId: 'm-3' });
  });

  it('flags a cut history and keeps the part it has', () => {
    const task = renderTask(sampleTask(), '1.0', { historyCut: true });
    expect(task.history).toHaveLength(3);
    expect(task.metadata).toMatchObject({ relay: { historyTruncated: true } });
    expect(renderTask(sampleTask(), '1.0', { historyCut: true, historyLength: 0 }).metadata).not.toHaveProperty('relay.historyTruncated');
  });

  it('omits artifacts when asked, and when there are none', () => {
    expect(renderTask(sampleTask(), '1.0', { includeArtifacts: false })).not.toHaveProperty('artifacts');
    expect(renderTask(sampleTask({ artifacts: [] }), '1.0')).not.toHaveProperty('artifacts');
  });

  it('keeps the mediaType and filename of text and data parts in v1.0 (v0.3 parts have none)', () => {
    const described: ArtifactView = {
      ...standardArtifact,
      parts: [
        { kind: 'text', text: '# x', media_type: 'text/markdown' },
        { kind: 'data', data: {}, filename: 'd.json', media_type: 'application/json' },
      ],
    };
    expect(renderArtifact(described, '1.0').parts).toEqual([
      { text: '# x', mediaType: 'text/markdown' },
      { data: {}, filename: 'd.json', mediaType: 'application/json' },
    ]);
    expect(renderArtifact(described, '0.3').parts).toEqual([
      { kind: 'text', text: '# x' },
      { kind: 'data', data: {} },
    ]);
  });

  it('renders a message without parts from its body', () => {
    expect(renderMessage({ ...message(1, 'recipient', 'hello'), parts: [] }, sampleTask(), '1.0').parts).toEqual([{ text: 'hello' }]);
    expect(renderArtifact({ ...standardArtifact, metadata: {} }, '1.0')).not.toHaveProperty('metadata');
  });
});

describe('renderTaskPage', () => {
  it('wraps tasks with paging fields and leaves artifacts out by default', () => {
    const page = renderTaskPage({ tasks: [sampleTask()], nextPageToken: null, pageSize: 50, totalSize: 1 }, '1.0');
    expect(page).toMatchObject({ nextPageToken: '', pageSize: 50, totalSize: 1 });
    expect((page.tasks as Record<string, unknown>[])[0]).not.toHaveProperty('artifacts');
  });

  it('drops histories past the byte budget and flags those tasks', () => {
    const big = (id: string) => sampleTask({ id, messages: [message(1, 'sender', 'x'.repeat(600))] });
    const page = renderTaskPage({ tasks: [big('a'), big('b'), big('c')], nextPageToken: 'n', pageSize: 3, totalSize: 9 }, '1.0', {
      historyBudgetBytes: 1500,
    });
    const tasks = page.tasks as Record<string, Record<string, unknown>>[];
    expect(tasks[0].history).toHaveLength(1);
    expect(tasks[1].history).toHaveLength(1);
    expect(tasks[2]).not.toHaveProperty('history');
    expect(tasks[2].metadata).toMatchObject({ relay: { historyTruncated: true } });
    expect(tasks[0].metadata).not.toHaveProperty('relay.historyTruncated');
    expect(page.nextPageToken).toBe('n');
  });

  it('flags the tasks whose history is only partly there', () => {
    const page = renderTaskPage(
      { tasks: [sampleTask({ id: 'a' }), sampleTask({ id: 'b' })], cutHistories: new Set(['b']), nextPageToken: null, pageSize: 2, totalSize: 2 },
      '1.0',
    );
    const tasks = page.tasks as Record<string, Record<string, unknown>>[];
    expect(tasks[0].metadata).not.toHaveProperty('relay.historyTruncated');
    expect(tasks[1].metadata).toMatchObject({ relay: { historyTruncated: true } });
    expect(tasks[1].history).toHaveLength(3);
  });
});
