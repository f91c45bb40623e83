import type { TaskMessage, Task } from '@app/relay-client';
import { defaultSessionId, marker, runIsAbandoned, standingOf, type Liveness } from './claims';

const FRANK = 'frank@acme';
const BOB = 'bob@acme';

function message(sequenceNo: number, from: string, payload: Record<string, unknown> = {}): TaskMessage {
  return { id: `m${sequenceNo}`, sequence_no: sequenceNo, from, body: `message ${sequenceNo}`, payload, created_at: '2026-01-01T00:00:00Z' };
}

function taskOf(state: Task['status']['state'], messages: TaskMessage[]): Pick<Task, 'status' | 'recipient' | 'messages'> {
  return { status: { state }, recipient: FRANK, messages };
}

describe('worker claims', () => {
  it('tells a task no worker took from one a run holds, one answered after a question and one waiting', () => {
    expect(standingOf(taskOf('accepted', [message(1, BOB)])).kind).toBe('not_a_worker_task');
    const run = message(2, FRANK, marker('run', 'worker:a:1', 60));
    expect(standingOf(taskOf('accepted', [message(1, BOB), run, message(3, FRANK, marker('progress', 'worker:a:1'))]))).toEqual({
      kind: 'run',
      claim: { kind: 'run', session_id: 'worker:a:1', lease_seconds: 60 },
      message: run,
    });
    const question = message(3, FRANK, marker('question', 'worker:a:1'));
    expect(standingOf(taskOf('accepted', [message(1, BOB), run, question, message(4, BOB)]))).toEqual({ kind: 'answered', question, runs: 1 });
    expect(standingOf(taskOf('input_required', [message(1, BOB), run, question])).kind).toBe('idle');
  });

  it("ignores markers in the sender's messages", () => {
    expect(standingOf(taskOf('accepted', [message(1, BOB, marker('run', 'worker:a:1', 60))])).kind).toBe('not_a_worker_task');
  });

  describe('runIsAbandoned', () => {
    const now = Date.parse('2026-01-01T01:00:00Z');
    const self = (overrides: Partial<Liveness> = {}): Liveness => ({
      sessionId: defaultSessionId('here', 100),
      host: 'here',
      holds: () => false,
      processExists: () => true,
      now: () => now,
      ...overrides,
    });
    const fresh = new Date(now - 1000).toISOString();

    it("is this worker's own session only while it does not hold the task", () => {
      const claim = { kind: 'run' as const, session_id: 'worker:here:100', lease_seconds: 3600 };
      expect(runIsAbandoned('T', claim, fresh, self())).toBe(true);
      expect(runIsAbandoned('T', claim, fresh, self({ holds: () => true }))).toBe(false);
    });

    it('is a worker of this machine whose process is gone, at once', () => {
      const claim = { kind: 'run' as const, session_id: 'worker:here:200', lease_seconds: 3600 };
      expect(runIsAbandoned('T', claim, fresh, self({ processExists: (pid) => pid !== 200 }))).toBe(true);
      expect(runIsAbandoned('T', claim, fresh, self())).toBe(false);
    });

    it('is any other worker once the task has not changed for longer than its lease', () => {
      const claim = { kind: 'run' as const, session_id: 'worker:elsewhere:200', lease_seconds: 600 };
      expect(runIsAbandoned('T', claim, new Date(now - 599_000).toISOString(), self({ processExists: () => false }))).toBe(false);
      expect(runIsAbandoned('T', claim, new Date(now - 601_000).toISOString(), self())).toBe(true);
      const named = { kind: 'run' as const, session_id: 'ci-runner-7', lease_seconds: 600 };
      expect(runIsAbandoned('T', named, new Date(now - 601_000).toISOString(), self())).toBe(true);
      expect(runIsAbandoned('T', named, fresh, self())).toBe(false);
    });
  });
});
