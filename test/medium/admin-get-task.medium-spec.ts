import { ADMIN_TASK_LIMITS, type SendRequest } from '@app/contracts';
import { GetAdminTask } from '../../apps/tasks/src/tasks/admin/get-task';
import { createTask, openTasksDatabase, participant, rejectionOf, rowsOf, textParts, type TasksDatabase } from './support/tasks-database';

describe('the admin read of one task against Postgres', () => {
  let database: TasksDatabase;
  let reads: GetAdminTask;
  const alice = participant('detail-alice');
  const bob = participant('detail-bob');

  beforeAll(async () => {
    database = await openTasksDatabase();
    reads = new GetAdminTask(database.dataSource);
  });

  afterAll(async () => {
    await database.close();
  });

  it('reads the task with its timeline and audit', async () => {
    const task = await createTask(database, alice, bob);
    await database.transitionTask.transition({ caller_id: bob.id, task_id: task.id, transition: 'accept', history_length: 0 });
    await database.transitionTask.transition({
      caller_id: bob.id,
      task_id: task.id,
      transition: 'request_input',
      history_length: 0,
      message: { parts: textParts('which one?') },
    });
    await database.sendTask.send({
      caller: alice,
      task_id: task.id,
      message: { parts: textParts('the blue one') },
      artifacts: [{ artifact_id: 'notes', name: 'notes.txt', parts: textParts('blue') }],
    } as SendRequest);
    await database.transitionTask.transition({ caller_id: bob.id, task_id: task.id, transition: 'fail', history_length: 0, reason: 'out of blue' });
    const cursors = `SELECT "participant_id", "last_read_sequence_no" FROM "tasks"."read_cursors" WHERE "task_id" = $1 ORDER BY "participant_id"`;
    const cursorsBefore = await rowsOf(database, cursors, [task.id]);
    const detail = await reads.get({ task_id: task.id.toLowerCase() });
    expect(await rowsOf(database, cursors, [task.id])).toEqual(cursorsBefore);

    expect(detail.task).toMatchObject({ id: task.id, state: 'failed', reason: 'out of blue', message_count: 3, unread_messages: 0 });
    expect(detail.task.messages.map((message) => [message.sequence_no, message.from, message.body])).toEqual([
      [1, alice.handle, 'please look'],
      [2, bob.handle, 'which one?'],
      [3, alice.handle, 'the blue one'],
    ]);
    expect(detail.task.artifacts.map((artifact) => artifact.artifact_id)).toEqual(['notes']);
    expect(detail.messages_truncated).toBe(false);

    const positions = await rowsOf<{ position: string }>(
      database,
      `SELECT "position"::text AS "position" FROM "tasks"."outbox_events" WHERE "task_id" = $1 ORDER BY "position"`,
      [task.id],
    );
    expect(detail.timeline.map((entry) => entry.position)).toEqual(positions.map((row) => row.position));
    expect(
      detail.timeline.map((entry) => [
        entry.event,
        entry.actor,
        entry.state,
        entry.message?.sequence_no ?? null,
        entry.artifact?.artifact_id ?? null,
        entry.reason ?? null,
      ]),
    ).toEqual([
      ['created', alice.handle, 'pending', 1, null, null],
      ['accepted', bob.handle, 'accepted', null, null, null],
      ['input_required', bob.handle, 'input_required', 2, null, null],
      ['artifact_updated', null, 'accepted', null, 'notes', null],
      ['message_appended', alice.handle, 'accepted', 3, null, null],
      ['accepted', alice.handle, 'accepted', null, null, null],
      ['failed', bob.handle, 'failed', null, null, 'out of blue'],
    ]);
    expect(detail.timeline_truncated).toBe(false);

    expect(detail.audit.map((row) => [row.actor, row.action, row.from_state, row.to_state])).toEqual([
      [alice.handle, 'create', null, 'pending'],
      [bob.handle, 'accept', 'pending', 'accepted'],
      [bob.handle, 'request_input', 'accepted', 'input_required'],
      [alice.handle, 'resume', 'input_required', 'accepted'],
      [bob.handle, 'fail', 'accepted', 'failed'],
    ]);
    expect(detail.audit[0].at).toBe(task.created_at);
  });

  it('stops the timeline at timelineEntries events, and says so', async () => {
    const task = await createTask(database, alice, bob);
    await database.transitionTask.transition({ caller_id: bob.id, task_id: task.id, transition: 'accept', history_length: 0 });
    await rowsOf(
      database,
      `INSERT INTO "tasks"."outbox_events" ("id", "subject", "type", "task_id", "payload")
       SELECT gen_random_uuid(), e."subject", e."type", e."task_id", e."payload"
       FROM "tasks"."outbox_events" e CROSS JOIN generate_series(1, $2::int)
       WHERE e."task_id" = $1 AND e."type" = 'accepted'`,
      [task.id, ADMIN_TASK_LIMITS.timelineEntries],
    );
    const detail = await reads.get({ task_id: task.id });
    expect(detail.timeline).toHaveLength(ADMIN_TASK_LIMITS.timelineEntries);
    expect(detail.timeline_truncated).toBe(true);
    expect(detail.timeline.slice(0, 3).map((entry) => [entry.event, entry.actor])).toEqual([
      ['created', alice.handle],
      ['accepted', bob.handle],
      ['accepted', null],
    ]);
  });

  it('answers task_not_found for an id that is no ULID and for one of no task', async () => {
    expect(await rejectionOf(reads.get({ task_id: 'nope' }))).toMatchObject({ reason: 'task_not_found', data: { task_id: 'nope' } });
    expect(await rejectionOf(reads.get({ task_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }))).toMatchObject({
      reason: 'task_not_found',
      data: { task_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' },
    });
  });
});
