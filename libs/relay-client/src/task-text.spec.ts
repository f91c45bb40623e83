import type { Task } from './relay-types';
import { artifactLine, oneLine, taskText } from './task-text';

const task: Task = {
  task_id: 'T1',
  thread_id: 'T1',
  status: { state: 'completed' },
  sender: { handle: 'bob@acme', name: 'Bob', role: 'backend' },
  recipient: 'frank@acme',
  summary: 'Refactored /users',
  intent: 'propose_action',
  artifacts: [
    { type: 'file_diff', path: 'src/users.ts', diff: '@@ -1 +1 @@\n-a\n+b\n' },
    { type: 'test_command', command: 'npm test', expected: 'green' },
    { type: 'file_ref', path: 'src/app.ts', line_start: 3, line_end: 9 },
  ],
  proposed_action: { description: 'Use next_cursor', target_files: ['web/Users.tsx'], rationale: 'Paginated API' },
  messages: [
    { id: 'm1', sequence_no: 1, from: 'bob@acme', body: 'Refactored /users', payload: {}, created_at: '2026-01-01T00:00:00Z' },
    { id: 'm2', sequence_no: 2, from: 'frank@acme', body: 'Done.\nAll green.', payload: {}, created_at: '2026-01-01T00:05:00Z' },
  ],
  message_count: 2,
  has_more_messages: false,
  next_after_sequence_no: null,
  result_summary: 'Client updated',
  reason: null,
  accepted_at: '2026-01-01T00:01:00Z',
  completed_at: '2026-01-01T00:06:00Z',
  cancelled_at: null,
  failed_at: null,
  rejected_at: null,
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:06:00Z',
};

describe('thread text', () => {
  it('renders a whole thread with diffs in full, messages and the result', () => {
    const text = taskText(task);
    expect(text).toContain('Handoff T1: completed since 2026-01-01T00:06:00Z (intent propose_action)');
    expect(text).toContain('From bob@acme (Bob) to frank@acme');
    expect(text).toContain('Proposed action: Use next_cursor\n  target files: web/Users.tsx\n  rationale: Paginated API');
    expect(text).toContain('- file_diff src/users.ts (3 lines)\n```\n@@ -1 +1 @@\n-a\n+b\n```');
    expect(text).toContain('- test_command `npm test` (expect: green)');
    expect(text).toContain('- file_ref src/app.ts:3-9');
    expect(text).toContain('#2 frank@acme at 2026-01-01T00:05:00Z:\n  Done.\n  All green.');
    expect(text).toContain('Result: Client updated');
  });

  it('leaves diffs out when not full', () => {
    expect(taskText(task, { full: false })).not.toContain('+b');
  });

  it('names artifacts in one line and cuts long text', () => {
    expect(artifactLine({ type: 'link', url: 'https://example.com', title: 'Spec' })).toBe('link https://example.com "Spec"');
    expect(oneLine('first line\nsecond', 50)).toBe('first line …');
    expect(oneLine('x'.repeat(10), 5)).toBe('xxxx…');
    expect(oneLine('short', 50)).toBe('short');
  });
});
