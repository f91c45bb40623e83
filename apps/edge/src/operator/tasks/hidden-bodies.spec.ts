import type { AdminTaskDetail, MessageView, TaskView } from '@app/contracts';
import { hideDetail, hidePage } from './hidden-bodies';

const SECRET = 'wombat-secret-body';

function message(sequence: number): MessageView {
  return {
    id: `m${sequence}`,
    sequence_no: sequence,
    from: 'alice@acme',
    author: 'sender',
    body: `${SECRET} text`,
    parts: [
      { kind: 'text', text: `${SECRET} text` },
      { kind: 'data', data: { note: SECRET } },
      { kind: 'file', file: { name: 'report.txt', mime_type: 'text/plain', bytes: Buffer.from(SECRET).toString('base64') } },
    ],
    payload: { note: SECRET },
    created_at: '2026-01-01T00:00:00.000Z',
  };
}

const party = (handle: string) => ({ id: handle, handle, name: handle, role: null });

const task: TaskView = {
  id: 't1',
  context_id: 'c1',
  state: 'failed',
  intent: 'propose_action',
  summary: `${SECRET} summary`,
  sender: party('alice@acme'),
  recipient: party('bob@acme'),
  proposed_action: { description: SECRET, target_files: ['src/a.ts'], rationale: SECRET, suggested_diff: SECRET },
  artifacts: [
    {
      artifact_id: 'a1',
      type: 'file_diff',
      fields: { path: 'src/a.ts', diff: SECRET },
      name: 'the diff',
      description: SECRET,
      parts: [],
      metadata: { n: SECRET },
    },
  ],
  messages: [message(1), message(2)],
  message_count: 2,
  unread_messages: 0,
  result_summary: SECRET,
  reason: SECRET,
  metadata: { n: SECRET },
  accepted_at: null,
  completed_at: null,
  cancelled_at: null,
  failed_at: '2026-01-01T00:01:00.000Z',
  rejected_at: null,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:01:00.000Z',
  status_timestamp: '2026-01-01T00:01:00.000Z',
  hold: null,
  tool_prompts: null,
  chain: { parent_task_id: null, root_task_id: 't1', depth: 0 },
};

describe('hidden bodies (the auditor role)', () => {
  it('leaves no text an agent wrote in a task detail, and keeps who, when, states, counts and artifact names', () => {
    const detail: AdminTaskDetail = {
      task,
      timeline: [
        { position: '1', event: 'task.created', at: task.created_at, actor: 'alice@acme', state: 'pending', message: message(1) },
        { position: '2', event: 'task.artifact', at: task.created_at, actor: 'bob@acme', state: 'accepted', artifact: task.artifacts[0] },
        { position: '3', event: 'task.failed', at: task.updated_at, actor: 'bob@acme', state: 'failed', reason: SECRET },
      ],
      timeline_truncated: false,
      audit: [{ at: task.updated_at, actor: 'bob@acme', action: 'fail', from_state: 'accepted', to_state: 'failed' }],
      messages_truncated: false,
    };
    const hidden = hideDetail(detail);
    expect(JSON.stringify(hidden)).not.toContain(SECRET);
    expect(JSON.stringify(hidden)).not.toContain(Buffer.from(SECRET).toString('base64'));
    expect(hidden.bodies_hidden).toBe(true);
    expect(hidden.task).toMatchObject({ id: 't1', state: 'failed', message_count: 2, sender: { handle: 'alice@acme' }, recipient: { handle: 'bob@acme' } });
    expect(hidden.task.messages.map((entry) => [entry.id, entry.from, entry.parts.map((part) => part.kind)])).toEqual([
      ['m1', 'alice@acme', ['text', 'data', 'file']],
      ['m2', 'alice@acme', ['text', 'data', 'file']],
    ]);
    expect(hidden.task.artifacts[0]).toMatchObject({ artifact_id: 'a1', type: 'file_diff', name: 'the diff' });
    expect(hidden.timeline.map((entry) => [entry.position, entry.event, entry.state])).toEqual([
      ['1', 'task.created', 'pending'],
      ['2', 'task.artifact', 'accepted'],
      ['3', 'task.failed', 'failed'],
    ]);
    expect(hidden.audit).toEqual(detail.audit);
    // The original is untouched (a reply may be shared).
    expect(JSON.stringify(detail)).toContain(SECRET);
  });

  it('empties the summaries of a list page', () => {
    const row = { ...task, message_count: 2, artifact_count: 1, sender: { handle: 'alice@acme', name: 'A' }, recipient: { handle: 'bob@acme', name: 'B' } };
    const page = hidePage({ items: [row], next_cursor: 'x' });
    expect(JSON.stringify(page.items.map((item) => item.summary))).not.toContain(SECRET);
    expect(page).toMatchObject({ next_cursor: 'x', bodies_hidden: true, items: [{ id: 't1', state: 'failed' }] });
  });
});
