import { TASK_LIMITS, type SendRequest } from '@app/contracts';
import { createTask, openTasksDatabase, outboxEventsOf, participant, rejectionOf, rowsOf, textParts, type TasksDatabase } from './support/tasks-database';

describe('the create write path against Postgres', () => {
  let database: TasksDatabase;

  beforeAll(async () => {
    database = await openTasksDatabase();
  });

  afterAll(async () => {
    await database.close();
  });

  const send = (request: Partial<SendRequest>) => database.sendTask.send(request as SendRequest);

  it('writes the task, its message, artifacts, audit row, keys and created event in one go', async () => {
    const alice = participant('alice');
    const bob = participant('bob');
    const reply = await send({
      caller: alice,
      recipient: bob,
      message: { parts: textParts('review this'), message_id: 'm-1', payload: { ticket: 7 } },
      idempotency_key: 'key-1',
      metadata: { priority: 'high' },
      intent: 'ask_question',
      artifacts: [
        { artifact_id: 'diff', type: 'file_diff', fields: { path: 'a.ts', diff: '+x' } },
        { name: 'notes', parts: textParts('first') },
      ] as SendRequest['artifacts'],
    });
    expect(reply).toMatchObject({ created: true, idempotent_replay: false, message: { sequence_no: 1 } });
    const taskId = reply.task.id;
    const [task] = await rowsOf(database, `SELECT * FROM "tasks"."tasks" WHERE "id" = $1`, [taskId]);
    expect(task).toMatchObject({ state: 'pending', intent: 'ask_question', summary: 'review this', metadata: { priority: 'high' }, message_count: 1 });
    const messages = await rowsOf(database, `SELECT * FROM "tasks"."messages" WHERE "task_id" = $1`, [taskId]);
    expect(messages).toEqual([expect.objectContaining({ id: 'm-1', sequence_no: 1, author: 'sender', author_id: alice.id, payload: { ticket: 7 } })]);
    const artifacts = await rowsOf(database, `SELECT * FROM "tasks"."artifacts" WHERE "task_id" = $1 ORDER BY "position"`, [taskId]);
    expect(artifacts.map((artifact) => [artifact.position, artifact.artifact_id === 'diff', artifact.name, artifact.last_chunk])).toEqual([
      [1, true, null, true],
      [2, false, 'notes', true],
    ]);
    expect(artifacts.every((artifact) => Number(artifact.size_bytes) > 0)).toBe(true);
    const audit = await rowsOf(database, `SELECT "actor_id", "transition", "from_state", "to_state" FROM "tasks"."audit_log" WHERE "task_id" = $1`, [taskId]);
    expect(audit).toEqual([{ actor_id: alice.id, transition: 'create', from_state: null, to_state: 'pending' }]);
    const keys = await rowsOf(database, `SELECT "scope", "key", "created_task" FROM "tasks"."idempotency_keys" WHERE "task_id" = $1 ORDER BY "scope"`, [
      taskId,
    ]);
    expect(keys).toEqual([
      { scope: 'client_key', key: 'key-1', created_task: true },
      { scope: 'message_id', key: 'm-1', created_task: true },
    ]);
    const events = await outboxEventsOf(database, taskId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'created',
      payload: { type: 'created', task_id: taskId, state: 'pending', sequence_no: 1, task: { latest_message: { id: 'm-1', payload: { ticket: 7 } } } },
    });
  });

  it('stores repeated artifact ids of one create as the old upserts did: replaced in place, or appended to', async () => {
    const reply = await send({
      caller: participant('alice'),
      recipient: participant('bob'),
      message: { parts: textParts('artifacts') },
      artifacts: [
        { artifact_id: 'log', parts: textParts('one'), metadata: { a: 1 } },
        { artifact_id: 'other', name: 'kept', parts: textParts('k') },
        { artifact_id: 'log', append: true, parts: textParts('two'), metadata: { b: 2 } },
        { artifact_id: 'other', name: 'replaced', parts: textParts('r') },
      ] as SendRequest['artifacts'],
    });
    const artifacts = await rowsOf(database, `SELECT * FROM "tasks"."artifacts" WHERE "task_id" = $1 ORDER BY "position"`, [reply.task.id]);
    expect(artifacts).toEqual([
      expect.objectContaining({
        artifact_id: 'log',
        position: 1,
        parts: textParts('one').concat(textParts('two')),
        metadata: { a: 1, b: 2 },
        last_chunk: false,
      }),
      expect.objectContaining({ artifact_id: 'other', position: 2, name: 'replaced', last_chunk: true }),
    ]);
    expect(reply.task.artifacts.map((artifact) => artifact.artifact_id)).toEqual(['log', 'other']);
  });

  it('joins a named context the sender takes part in, and refuses a stranger context and a full one', async () => {
    const alice = participant('alice');
    const bob = participant('bob');
    const first = await createTask(database, alice, bob);
    const sibling = await createTask(database, bob, participant('carol'), { context_id: first.context_id });
    expect(sibling.context_id).toBe(first.context_id);
    const stranger = await rejectionOf(createTask(database, participant('eve'), alice, { context_id: first.context_id }));
    expect(stranger).toMatchObject({ reason: 'invalid_params', data: { field: 'context_id' } });

    const full = await createTask(database, alice, bob, { context_id: `ctx-${first.id}` });
    for (let index = 1; index < TASK_LIMITS.tasksPerContext; index++) await createTask(database, alice, bob, { context_id: full.context_id });
    const refused = await rejectionOf(createTask(database, alice, bob, { context_id: full.context_id }));
    expect(refused).toMatchObject({ reason: 'context_limit_reached', data: { context_id: full.context_id, limit: TASK_LIMITS.tasksPerContext } });
    const [{ count }] = await rowsOf(database, `SELECT count(*)::int AS "count" FROM "tasks"."tasks" WHERE "context_id" = $1`, [full.context_id]);
    expect(count).toBe(TASK_LIMITS.tasksPerContext);
  });

  it('answers a retry with the first task, and refuses the key with other content', async () => {
    const alice = participant('alice');
    const bob = participant('bob');
    const request = { caller: alice, recipient: bob, message: { parts: textParts('once') }, idempotency_key: 'retry-1' };
    const first = await send(request);
    const again = await send(request);
    expect(again).toMatchObject({ task: { id: first.task.id }, message: { id: first.message.id }, created: true, idempotent_replay: true });
    const other = await rejectionOf(send({ ...request, message: { parts: textParts('changed') } }));
    expect(other).toMatchObject({ reason: 'duplicate_idempotency_key', data: { field: 'idempotency_key', key: 'retry-1' } });
    const [{ count }] = await rowsOf(database, `SELECT count(*)::int AS "count" FROM "tasks"."tasks" WHERE "sender_id" = $1`, [alice.id]);
    expect(count).toBe(1);
  });

  it('refuses artifacts past a task cap whole, writing nothing', async () => {
    const alice = participant('alice');
    const artifacts = Array.from({ length: TASK_LIMITS.artifactsPerTask + 1 }, (_, index) => ({ name: `a${index}`, parts: textParts('x') }));
    const refused = await rejectionOf(
      send({ caller: alice, recipient: participant('bob'), message: { parts: textParts('many') }, artifacts } as Partial<SendRequest>),
    );
    expect(refused).toMatchObject({ reason: 'invalid_params', data: { field: 'artifacts', limit: 'artifacts_per_thread' } });
    const [{ count }] = await rowsOf(database, `SELECT count(*)::int AS "count" FROM "tasks"."tasks" WHERE "sender_id" = $1`, [alice.id]);
    expect(count).toBe(0);
  });

  it('gives two concurrent creates with one key one task: one created it, the other replays it', async () => {
    for (let round = 0; round < 10; round++) {
      const alice = participant('alice');
      const request = { caller: alice, recipient: participant('bob'), message: { parts: textParts('race') }, idempotency_key: `race-${round}` };
      const replies = await Promise.all([send(request), send(request)]);
      expect(replies[0].task.id).toBe(replies[1].task.id);
      expect(replies.map((reply) => reply.created)).toEqual([true, true]);
      expect(replies.map((reply) => reply.idempotent_replay).sort()).toEqual([false, true]);
      const tasks = await rowsOf(database, `SELECT "id" FROM "tasks"."tasks" WHERE "sender_id" = $1`, [alice.id]);
      expect(tasks).toEqual([{ id: replies[0].task.id }]);
      expect(await outboxEventsOf(database, replies[0].task.id)).toHaveLength(1);
    }
  });
});
