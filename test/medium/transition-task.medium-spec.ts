import { TASK_LIMITS, type SendRequest, type TransitionRequest } from '@app/contracts';
import { eventually } from '../support/eventually';
import { createTask, openTasksDatabase, outboxEventsOf, participant, rejectionOf, rowsOf, textParts, type TasksDatabase } from './support/tasks-database';

describe('the transition write path against Postgres', () => {
  let database: TasksDatabase;
  const alice = participant('alice');
  const bob = participant('bob');

  beforeAll(async () => {
    database = await openTasksDatabase();
  });

  afterAll(async () => {
    await database.close();
  });

  const move = (callerId: string, taskId: string, transition: TransitionRequest['transition'], extra: Partial<TransitionRequest> = {}) =>
    database.transitionTask.transition({ caller_id: callerId, task_id: taskId, transition, history_length: 0, ...extra });

  /** A task of alice's to bob, moved along `path` first (request_input with its question). */
  const taskIn = async (...path: Array<TransitionRequest['transition']>) => {
    const task = await createTask(database, alice, bob);
    for (const transition of path) await move(bob.id, task.id, transition, transition === 'request_input' ? { message: { parts: textParts('?') } } : {});
    return task.id;
  };

  const auditOf = (taskId: string) =>
    rowsOf(database, `SELECT "actor_id", "transition", "from_state", "to_state", "reason" FROM "tasks"."audit_log" WHERE "task_id" = $1 ORDER BY "id"`, [
      taskId,
    ]);

  it.each([
    ['accept', 'recipient', [], 'accepted', 'accepted'],
    ['decline', 'recipient', [], 'rejected', 'rejected'],
    ['cancel', 'sender', [], 'cancelled', 'canceled'],
    ['request_input', 'recipient', ['accept'], 'input_required', 'input_required'],
    ['complete', 'recipient', ['accept'], 'completed', 'completed'],
    ['complete', 'recipient', ['accept', 'request_input'], 'completed', 'completed'],
    ['fail', 'recipient', ['accept'], 'failed', 'failed'],
    ['fail', 'recipient', ['accept', 'request_input'], 'failed', 'failed'],
  ] as const)('%s by the %s after %j: the state, its audit row and its event', async (transition, who, path, state, eventType) => {
    const taskId = await taskIn(...path);
    const from = (await rowsOf(database, `SELECT "state" FROM "tasks"."tasks" WHERE "id" = $1`, [taskId]))[0].state;
    const callerId = who === 'sender' ? alice.id : bob.id;
    const reply = await move(callerId, taskId, transition, {
      reason: transition === 'fail' ? 'broken' : undefined,
      message: transition === 'request_input' ? { parts: textParts('which one?') } : undefined,
    });
    expect(reply.task.state).toBe(state);
    expect((await auditOf(taskId)).at(-1)).toMatchObject({ actor_id: callerId, transition, from_state: from, to_state: state });
    const [stored] = await rowsOf(database, `SELECT * FROM "tasks"."tasks" WHERE "id" = $1`, [taskId]);
    expect(stored.state).toBe(state);
    if (state !== 'input_required') expect(stored[`${state === 'cancelled' ? 'cancelled' : state}_at`]).not.toBeNull();
    if (transition === 'fail') expect(stored.reason).toBe('broken');
    const events = await outboxEventsOf(database, taskId);
    expect(events.at(-1)).toMatchObject({ type: eventType, payload: { state } });
  });

  it('cancels an accepted or waiting task with the A2A cancel, and answers its refusals with task_not_cancelable', async () => {
    for (const path of [['accept'], ['accept', 'request_input']] as const) {
      const taskId = await taskIn(...path);
      expect(await rejectionOf(move(alice.id, taskId, 'cancel'))).toMatchObject({ reason: 'invalid_transition', data: { transition: 'cancel' } });
      expect((await move(alice.id, taskId, 'cancel', { cancel_mode: 'any_active' })).task.state).toBe('cancelled');
      expect(await rejectionOf(move(alice.id, taskId, 'cancel', { cancel_mode: 'any_active' }))).toMatchObject({ reason: 'task_not_cancelable' });
      expect(await rejectionOf(move(bob.id, taskId, 'cancel', { cancel_mode: 'any_active' }))).toMatchObject({ reason: 'task_not_cancelable' });
    }
  });

  it('records a progress update with a message or artifacts, keeping the state', async () => {
    const taskId = await taskIn('accept');
    const withMessage = await move(bob.id, taskId, 'progress', { message: { parts: textParts('half way') } });
    expect(withMessage).toMatchObject({ task: { state: 'accepted', message_count: 2 }, message: { sequence_no: 2 } });
    const withArtifact = await move(bob.id, taskId, 'progress', {
      artifacts: [{ artifact_id: 'log', parts: textParts('step 1') }],
    } as Partial<TransitionRequest>);
    expect(withArtifact.task.artifacts.map((artifact) => artifact.artifact_id)).toEqual(['log']);
    const events = await outboxEventsOf(database, taskId);
    expect(events.slice(-2).map((event) => event.type)).toEqual(['message_appended', 'artifact_updated']);
    expect((await auditOf(taskId)).map((row) => row.transition)).toEqual(['create', 'accept']);
  });

  it('refuses the wrong party, a wrong state, a stranger and an unknown task, each precisely, writing nothing', async () => {
    const taskId = await taskIn();
    expect(await rejectionOf(move(alice.id, taskId, 'accept'))).toMatchObject({
      reason: 'not_authorized_transition',
      data: { transition: 'accept', required_role: 'recipient' },
    });
    expect(await rejectionOf(move(bob.id, taskId, 'complete'))).toMatchObject({
      reason: 'invalid_transition',
      data: { transition: 'complete', state: 'pending', allowed_from: ['accepted', 'input_required'] },
    });
    expect(await rejectionOf(move(bob.id, taskId, 'progress', { message: { parts: textParts('early') } }))).toMatchObject({ reason: 'invalid_transition' });
    expect(await rejectionOf(move(participant('eve').id, taskId, 'accept'))).toMatchObject({ reason: 'not_a_participant' });
    expect(await rejectionOf(move(bob.id, 'T0000000000000000000000000', 'accept'))).toMatchObject({ reason: 'thread_not_found' });
    expect(await rejectionOf(move(bob.id, taskId, 'request_input'))).toMatchObject({ reason: 'invalid_params', data: { field: 'message' } });
    expect((await auditOf(taskId)).map((row) => row.transition)).toEqual(['create']);
    expect((await outboxEventsOf(database, taskId)).map((event) => event.type)).toEqual(['created']);
  });

  it("appends to and replaces the task's artifacts in a progress update, each with its event, and answers with the history asked for", async () => {
    const task = await createTask(database, alice, bob, { artifacts: [{ artifact_id: 'log', parts: textParts('one') }] } as Partial<SendRequest>);
    await move(bob.id, task.id, 'accept');
    const reply = await move(bob.id, task.id, 'progress', {
      message: { parts: textParts('more') },
      artifacts: [
        { artifact_id: 'log', append: true, parts: textParts('two'), last_chunk: true },
        { artifact_id: 'plan', parts: textParts('plan') },
      ],
      history_length: 1,
    } as Partial<TransitionRequest>);
    expect(reply.task.messages.map((message) => message.sequence_no)).toEqual([2]);
    expect(reply.task.artifacts.map((artifact) => [artifact.artifact_id, artifact.parts.length])).toEqual([
      ['log', 2],
      ['plan', 1],
    ]);
    const stored = await rowsOf(
      database,
      `SELECT "artifact_id", "position", "last_chunk", "size_bytes" FROM "tasks"."artifacts" WHERE "task_id" = $1 ORDER BY 2`,
      [task.id],
    );
    expect(stored.map((row) => [row.artifact_id, row.position, row.last_chunk])).toEqual([
      ['log', 1, true],
      ['plan', 2, true],
    ]);
    const events = await outboxEventsOf(database, task.id);
    expect(events.slice(-3).map((event) => [event.type, event.payload.artifact ? (event.payload.artifact as { append: boolean }).append : null])).toEqual([
      ['artifact_updated', true],
      ['artifact_updated', false],
      ['message_appended', null],
    ]);
    const completed = await move(bob.id, task.id, 'complete', { history_length: undefined });
    expect(completed.task.messages.map((message) => message.sequence_no)).toEqual([1, 2]);
  });

  it('refuses artifacts past a cap at the first one that meets it, writing nothing', async () => {
    const taskId = await taskIn('accept');
    const artifacts = Array.from({ length: TASK_LIMITS.artifactsPerTask + 1 }, (_, index) => ({ artifact_id: `a${index}`, parts: textParts('x') }));
    const refused = await rejectionOf(move(bob.id, taskId, 'progress', { artifacts } as Partial<TransitionRequest>));
    expect(refused).toMatchObject({ reason: 'invalid_params', data: { field: 'artifacts', limit: 'artifacts_per_thread' } });
    expect(await rowsOf(database, `SELECT 1 FROM "tasks"."artifacts" WHERE "task_id" = $1`, [taskId])).toEqual([]);
    const [row] = await rowsOf(database, `SELECT "version" FROM "tasks"."tasks" WHERE "id" = $1`, [taskId]);
    expect(row.version).toBe(2);
  });

  it('lets a transition overtaken only by messages go through: concurrent updates and appends all land, numbered contiguously', async () => {
    const taskId = await taskIn('accept');
    const updates = Array.from({ length: 4 }, (_, index) => move(bob.id, taskId, 'progress', { message: { parts: textParts(`update ${index}`) } }));
    const appends = Array.from({ length: 4 }, (_, index) =>
      database.sendTask.send({ caller: alice, task_id: taskId, message: { parts: textParts(`note ${index}`) } } as SendRequest),
    );
    const question = move(bob.id, taskId, 'request_input', { message: { parts: textParts('which?') } });
    await Promise.all([...updates, ...appends, question]);
    const stored = await rowsOf<{ sequence_no: number }>(database, `SELECT "sequence_no" FROM "tasks"."messages" WHERE "task_id" = $1 ORDER BY 1`, [taskId]);
    expect(stored.map((row) => row.sequence_no)).toEqual(Array.from({ length: 10 }, (_, index) => index + 1));
    const [row] = await rowsOf(database, `SELECT "message_count" FROM "tasks"."tasks" WHERE "id" = $1`, [taskId]);
    expect(row.message_count).toBe(10);
  });

  it('gives concurrent transitions of one task exactly one winner; the others are told precisely', async () => {
    for (let round = 0; round < 8; round++) {
      const taskId = await taskIn();
      const outcomes = await Promise.allSettled([move(bob.id, taskId, 'accept'), move(bob.id, taskId, 'decline'), move(alice.id, taskId, 'cancel')]);
      const winners = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      expect(winners).toHaveLength(1);
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') expect(['state_changed', 'invalid_transition']).toContain((outcome.reason as { reason: string }).reason);
      }
      expect(await auditOf(taskId)).toHaveLength(2);
      expect(await outboxEventsOf(database, taskId)).toHaveLength(2);
    }
  });

  /**
   * The change that overtakes a transition between its read and its write: another transaction
   * holds the task's row, the transition's UPDATE waits on it, and the other one moves the task.
   */
  const overtaken = async (taskId: string, transition: Promise<unknown>, lock: { query: (sql: string, values?: unknown[]) => Promise<unknown> }) => {
    await eventually(async () => {
      const { rows } = await database.pool.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%UPDATE "tasks"."tasks"%'`,
      );
      expect(rows.length).toBeGreaterThan(0);
    }, 30000);
    await lock.query(`UPDATE "tasks"."tasks" SET "state" = 'cancelled', "cancelled_at" = now() WHERE "id" = $1`, [taskId]);
    await lock.query('COMMIT');
    return rejectionOf(transition);
  };

  it.each([
    ['accept (no message)', 'accept', [], undefined],
    ['request_input (with its question)', 'request_input', ['accept'], { parts: textParts('which?') }],
  ] as const)('answers state_changed when another change overtakes %s', async (_name, transition, path, message) => {
    const taskId = await taskIn(...path);
    const lock = await database.pool.connect();
    try {
      await lock.query('BEGIN');
      await lock.query(`SELECT 1 FROM "tasks"."tasks" WHERE "id" = $1 FOR UPDATE`, [taskId]);
      const expected = path.length === 0 ? 'pending' : 'accepted';
      const error = await overtaken(taskId, move(bob.id, taskId, transition, message ? { message } : {}), lock);
      expect(error).toMatchObject({ reason: 'state_changed', data: { expected_state: expected, state: 'cancelled' } });
    } finally {
      lock.release();
    }
    expect((await auditOf(taskId)).at(-1)?.transition).not.toBe(transition);
  });
});
