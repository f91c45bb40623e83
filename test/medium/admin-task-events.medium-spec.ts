import type { AdminEventsReply } from '@app/contracts';
import { ADMIN_TASK_LIMITS } from '@app/contracts';
import { AdminTaskEvents } from '../../apps/tasks/src/tasks/admin/task-events';
import { createTask, openTasksDatabase, participant, rejectionOf, rowsOf, type TasksDatabase } from './support/tasks-database';

describe("the admin API's task events against Postgres", () => {
  let database: TasksDatabase;
  let reads: AdminTaskEvents;
  const alice = participant('events-alice');
  const bob = participant('events-bob');

  const eventsOf = (reply: AdminEventsReply, taskId: string) => reply.events.filter((event) => event.event.task_id === taskId);

  beforeAll(async () => {
    database = await openTasksDatabase();
    reads = new AdminTaskEvents(database.dataSource);
  });

  afterAll(async () => {
    await database.close();
  });

  it("answers without a position with the newest one and no events, and after it with each task's events in order, not push-config ones", async () => {
    const start = await reads.events({});
    expect(start).toEqual({ events: [], has_more: false, position: expect.stringMatching(/^[0-9]+$/) });
    const task = await createTask(database, alice, bob);
    await rowsOf(
      database,
      `INSERT INTO "tasks"."outbox_events" ("id", "subject", "type", "task_id", "payload") VALUES (gen_random_uuid(), 'relay.events.push_config.set', 'push_config_set', $1, '{}')`,
      [task.id],
    );
    await database.transitionTask.transition({ caller_id: bob.id, task_id: task.id, transition: 'accept', history_length: 0 });
    await database.transitionTask.transition({ caller_id: bob.id, task_id: task.id, transition: 'complete', history_length: 0 });
    const stored = await rowsOf<{ position: string; type: string }>(
      database,
      `SELECT "position"::text AS "position", "type" FROM "tasks"."outbox_events" WHERE "task_id" = $1 AND "type" <> 'push_config_set' ORDER BY "position"`,
      [task.id],
    );
    const reply = await reads.events({ after_position: start.position });
    const mine = eventsOf(reply, task.id);
    expect(mine.map((event) => [event.position, event.event.type])).toEqual(stored.map((row) => [row.position, row.type]));
    expect(mine.map((event) => event.event.type)).toEqual(['created', 'accepted', 'completed']);
    expect(BigInt(reply.position)).toBeGreaterThanOrEqual(BigInt(stored[2].position));
    expect(eventsOf(await reads.events({ after_position: stored[0].position }), task.id).map((event) => event.event.type)).toEqual(['accepted', 'completed']);
  });

  it('pages at eventsPageEvents events, has_more until the last', async () => {
    const task = await createTask(database, alice, bob);
    const [created] = await rowsOf<{ position: string; payload: object }>(
      database,
      `SELECT "position"::text AS "position", "payload" FROM "tasks"."outbox_events" WHERE "task_id" = $1`,
      [task.id],
    );
    const extra = ADMIN_TASK_LIMITS.eventsPageEvents + 5;
    await rowsOf(
      database,
      `INSERT INTO "tasks"."outbox_events" ("id", "subject", "type", "task_id", "payload")
       SELECT gen_random_uuid(), 'relay.events.task.message_appended', 'message_appended', $1, $2::jsonb || jsonb_build_object('type', 'message_appended', 'n', i)
       FROM generate_series(1, $3::int) AS i ORDER BY i`,
      [task.id, JSON.stringify(created.payload), extra],
    );
    const first = await reads.events({ after_position: created.position });
    expect(first.events).toHaveLength(ADMIN_TASK_LIMITS.eventsPageEvents);
    expect(first.has_more).toBe(true);
    const last = first.events[first.events.length - 1].position;
    const second = await reads.events({ after_position: last });
    const numbers = [...eventsOf(first, task.id), ...eventsOf(second, task.id)].map((event) => (event.event as unknown as { n: number }).n);
    expect(numbers).toEqual(Array.from({ length: extra }, (_, index) => index + 1));
  });

  it('refuses a position that is not one, one past the newest, and one older than the horizon', async () => {
    expect(await rejectionOf(reads.events({ after_position: 'abc' }))).toMatchObject({ reason: 'invalid_params', data: { field: 'Last-Event-ID' } });
    const { position } = await reads.events({});
    expect(await rejectionOf(reads.events({ after_position: String(BigInt(position) + 1000n) }))).toMatchObject({
      reason: 'invalid_params',
      data: { field: 'Last-Event-ID' },
    });
    const [horizon] = await rowsOf<{ deleted_through: string }>(
      database,
      `SELECT "deleted_through"::text AS "deleted_through" FROM "tasks"."outbox_horizon" WHERE "id" = 1`,
      [],
    );
    await rowsOf(database, `UPDATE "tasks"."outbox_horizon" SET "deleted_through" = $1 WHERE "id" = 1`, [position]);
    try {
      expect(await rejectionOf(reads.events({ after_position: String(BigInt(position) - 1n) }))).toMatchObject({
        reason: 'events_expired',
        data: { field: 'Last-Event-ID', oldest_position: position },
      });
      expect((await reads.events({ after_position: position })).events).toEqual([]);
    } finally {
      await rowsOf(database, `UPDATE "tasks"."outbox_horizon" SET "deleted_through" = $1 WHERE "id" = 1`, [horizon.deleted_through]);
    }
  });
});
