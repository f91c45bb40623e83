import { RelayError, type TransitionRequest } from '@app/contracts';
import { changeTaskInSteps, loadTask, type RefusedStep, type TaskChange } from '../../apps/tasks/src/tasks/store/change-write';
import { transitionChange } from '../../apps/tasks/src/tasks/store/transition-write';
import type { TaskRow } from '../../apps/tasks/src/tasks/store/task-rows';
import { appendChange } from '../../apps/tasks/src/tasks/use-cases/send-task';
import { createTask, openTasksDatabase, outboxEventsOf, participant, rejectionOf, rowsOf, textParts, type TasksDatabase } from './support/tasks-database';

describe('several changes of a task written as one (an upstream answer) against Postgres', () => {
  let database: TasksDatabase;
  const alice = participant('alice');
  const bob = participant('bob');

  beforeAll(async () => {
    database = await openTasksDatabase();
  });

  afterAll(async () => {
    await database.close();
  });

  const transition =
    (taskId: string, command: TransitionRequest['transition'], extra: Partial<TransitionRequest> = {}) =>
    (current: TaskRow): TaskChange =>
      transitionChange(current, { caller_id: bob.id, task_id: taskId, transition: command, history_length: 0, ...extra });
  const append =
    (taskId: string, text: string, messageId: string) =>
    (current: TaskRow): TaskChange =>
      appendChange(
        current,
        { caller: bob, task_id: taskId, message: { message_id: messageId, parts: textParts(text) }, history_length: 0 },
        `hash-${messageId}`,
      );
  const refused = (error: unknown): RefusedStep | undefined =>
    error instanceof RelayError ? (error.reason === 'thread_terminal' ? 'end' : error.reason === 'invalid_transition' ? 'skip' : undefined) : undefined;
  const overtaken = () => new RelayError('state_changed', 'overtaken');
  const auditOf = (taskId: string) =>
    rowsOf<{ transition: string; from_state: string; to_state: string }>(
      database,
      `SELECT "transition", "from_state", "to_state" FROM "tasks"."audit_log" WHERE "task_id" = $1 ORDER BY "id"`,
      [taskId],
    );
  const messagesOf = (taskId: string) =>
    rowsOf<{ sequence_no: number; id: string; author: string; body: string }>(
      database,
      `SELECT "sequence_no", "id", "author", "body" FROM "tasks"."messages" WHERE "task_id" = $1 ORDER BY "sequence_no"`,
      [taskId],
    );

  it('writes an accept, a message and a completion with its artifact in one version, each step as the ones before it leave the task', async () => {
    const task = await createTask(database, alice, bob);
    const before = await loadTask(database.pool, task.id);
    const written = await changeTaskInSteps(
      database.pool,
      task.id,
      [
        transition(task.id, 'accept'),
        append(task.id, 'working on it', 'answer-1'),
        transition(task.id, 'complete', {
          message: { message_id: 'answer-2', parts: textParts('done') },
          artifacts: [{ artifact_id: 'result', parts: textParts('RESULT') }],
          result_summary: 'all done',
        }),
      ],
      refused,
      overtaken,
    );
    expect(written.ended).toBe(false);
    expect(written.task).toMatchObject({ state: 'completed', version: before.version + 1, message_count: 3, result_summary: 'all done' });
    const [stored] = await rowsOf(database, `SELECT * FROM "tasks"."tasks" WHERE "id" = $1`, [task.id]);
    expect(stored).toMatchObject({ state: 'completed', version: before.version + 1, message_count: 3, result_summary: 'all done' });
    expect(stored.accepted_at).not.toBeNull();
    expect(stored.completed_at).not.toBeNull();
    expect(await auditOf(task.id)).toEqual([
      { transition: 'create', from_state: null, to_state: 'pending' },
      { transition: 'accept', from_state: 'pending', to_state: 'accepted' },
      { transition: 'complete', from_state: 'accepted', to_state: 'completed' },
    ]);
    expect(await messagesOf(task.id)).toEqual([
      expect.objectContaining({ sequence_no: 1, author: 'sender' }),
      { sequence_no: 2, id: 'answer-1', author: 'recipient', body: 'working on it' },
      { sequence_no: 3, id: 'answer-2', author: 'recipient', body: 'done' },
    ]);
    const artifacts = await rowsOf(database, `SELECT "artifact_id", "parts" FROM "tasks"."artifacts" WHERE "task_id" = $1`, [task.id]);
    expect(artifacts).toEqual([{ artifact_id: 'result', parts: [expect.objectContaining({ text: 'RESULT' })] }]);
    // The appended message's id is kept as the recipient's idempotency key, beside that message (a transition keeps none, as alone).
    const keys = await rowsOf(database, `SELECT "key", "sequence_no" FROM "tasks"."idempotency_keys" WHERE "task_id" = $1 ORDER BY "sequence_no"`, [task.id]);
    expect(keys).toEqual([expect.objectContaining({ key: 'answer-1', sequence_no: 2 })]);
    // Every step's events, in order, with the task as that step left it; published in that order.
    const events = await outboxEventsOf(database, task.id);
    expect(events.slice(1).map((event) => [event.type, event.payload.state])).toEqual([
      ['accepted', 'accepted'],
      ['message_appended', 'accepted'],
      ['artifact_updated', 'completed'],
      ['completed', 'completed'],
    ]);
    // The task's earlier event not published yet (nothing publishes here) goes first.
    expect(written.events.map((event) => event.subject)).toEqual([
      'relay.events.task.created',
      'relay.events.task.accepted',
      'relay.events.task.message_appended',
      'relay.events.task.artifact_updated',
      'relay.events.task.completed',
    ]);
    const positions = written.events.map((event) => BigInt(event.position));
    expect([...positions].sort((a, b) => (a < b ? -1 : 1))).toEqual(positions);
  });

  it('skips a step refused as already made, and ends at a step the ended task refuses, writing the ones before it', async () => {
    const task = await createTask(database, alice, bob);
    const skipped = await changeTaskInSteps(
      database.pool,
      task.id,
      [transition(task.id, 'accept'), transition(task.id, 'accept'), transition(task.id, 'complete'), append(task.id, 'too late', 'late-1')],
      refused,
      overtaken,
    );
    expect(skipped).toMatchObject({ ended: true, task: { state: 'completed', message_count: 1 } });
    expect((await auditOf(task.id)).map((row) => row.transition)).toEqual(['create', 'accept', 'complete']);
    // Nothing left to write: the task as read, no events.
    const nothing = await changeTaskInSteps(database.pool, task.id, [append(task.id, 'later still', 'late-2')], refused, overtaken);
    expect(nothing).toMatchObject({ ended: true, events: [], task: { state: 'completed' } });
  });

  it('writes nothing when a step is refused for another reason', async () => {
    const task = await createTask(database, alice, bob);
    const before = await loadTask(database.pool, task.id);
    const failing = changeTaskInSteps(
      database.pool,
      task.id,
      [transition(task.id, 'accept'), transition(task.id, 'complete', { artifacts: [{ artifact_id: 'x', parts: [] }] }), transition(task.id, 'decline')],
      (error) => (error instanceof RelayError && error.reason === 'thread_terminal' ? 'end' : undefined),
      overtaken,
    );
    expect(await rejectionOf(failing)).toMatchObject({ reason: 'invalid_transition' });
    const [stored] = await rowsOf(database, `SELECT "state", "version" FROM "tasks"."tasks" WHERE "id" = $1`, [task.id]);
    expect(stored).toEqual({ state: 'pending', version: before.version });
    expect(await outboxEventsOf(database, task.id)).toHaveLength(1);
  });

  it('decides the steps again on the task as changed meanwhile, when what it read is stale', async () => {
    const task = await createTask(database, alice, bob);
    const stale = await loadTask(database.pool, task.id);
    // Another report accepts the task after this one read it.
    await changeTaskInSteps(database.pool, task.id, [transition(task.id, 'accept')], refused, overtaken);
    const written = await changeTaskInSteps(
      database.pool,
      task.id,
      [transition(task.id, 'accept'), transition(task.id, 'complete')],
      refused,
      overtaken,
      undefined,
      stale,
    );
    expect(written.task).toMatchObject({ state: 'completed', version: stale.version + 2 });
    expect((await auditOf(task.id)).map((row) => row.transition)).toEqual(['create', 'accept', 'complete']);
  });
});
