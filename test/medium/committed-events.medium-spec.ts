import type { TransitionRequest } from '@app/contracts';
import { createTask, openTasksDatabase, participant, rowsOf, textParts, type TasksDatabase } from './support/tasks-database';

/**
 * What a write hands over to publish right after its commit: its own events as the outbox stored
 * them, behind the earlier events of its task that are not published yet (the medium tier has no
 * NATS, so nothing is published unless a test marks it).
 */
describe('the events a write hands over to publish after its commit', () => {
  let database: TasksDatabase;
  const alice = participant('alice');
  const bob = participant('bob');

  beforeAll(async () => {
    database = await openTasksDatabase();
  });

  afterAll(async () => {
    await database.close();
  });

  const move = (taskId: string, transition: TransitionRequest['transition'], extra: Partial<TransitionRequest> = {}) =>
    database.transitionTask.transition({ caller_id: bob.id, task_id: taskId, transition, history_length: 0, ...extra });

  /** The task's outbox rows, oldest first, as a publish sends them. */
  const outboxOf = (taskId: string) =>
    rowsOf(
      database,
      `SELECT "id", "position"::text AS "position", "task_id", "subject", "payload", "trace_parent" FROM "tasks"."outbox_events"
       WHERE "task_id" = $1 ORDER BY "position"`,
      [taskId],
    );

  /** The events handed over by the last write of `taskId`. */
  const lastHandedOver = (taskId: string) => database.handedOver.ofTask(taskId).at(-1);

  it('hands over a create’s one event as the outbox holds it, with its position', async () => {
    const task = await createTask(database, alice, bob);
    expect(database.handedOver.ofTask(task.id)).toHaveLength(1);
    const stored = await outboxOf(task.id);
    expect(stored).toHaveLength(1);
    expect(lastHandedOver(task.id)).toEqual(stored);
  });

  it('hands over the task’s earlier unpublished events first, then the change’s own, oldest first', async () => {
    const task = await createTask(database, alice, bob);
    await move(task.id, 'accept');
    await move(task.id, 'request_input', { message: { parts: textParts('which branch?') } });
    const stored = await outboxOf(task.id);
    expect(stored.map((row) => (row.payload as { type: string }).type)).toEqual(['created', 'accepted', 'input_required']);
    expect(lastHandedOver(task.id)).toEqual(stored);
  });

  it('hands over only the change’s own events once the earlier ones are published', async () => {
    const task = await createTask(database, alice, bob);
    await move(task.id, 'accept');
    await rowsOf(database, `UPDATE "tasks"."outbox_events" SET "published_at" = now() WHERE "task_id" = $1`, [task.id]);
    await move(task.id, 'complete', { result_summary: 'done' });
    const stored = await outboxOf(task.id);
    expect(lastHandedOver(task.id)).toEqual(stored.slice(2));
    expect((stored[2].payload as { type: string }).type).toBe('completed');
  });

  it('hands over nothing for a change that was refused, having written nothing', async () => {
    const task = await createTask(database, alice, bob);
    const before = database.handedOver.ofTask(task.id).length;
    await expect(move(task.id, 'complete')).rejects.toMatchObject({ reason: 'invalid_transition' });
    expect(database.handedOver.ofTask(task.id)).toHaveLength(before);
  });
});
