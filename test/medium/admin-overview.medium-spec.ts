import { AdminOverview } from '../../apps/tasks/src/tasks/admin/overview';
import { nextTaskId } from '../../apps/tasks/src/tasks/store/task-ids';
import { openTasksDatabase, participant, rowsOf, type TasksDatabase } from './support/tasks-database';

describe("the admin API's overview against Postgres", () => {
  let database: TasksDatabase;
  let reads: AdminOverview;
  const alice = participant('overview-alice');
  const bob = participant('overview-bob');

  /** A task of alice's to bob written as it was at `createdAt`, completed at `completedAt` when given. */
  const seed = (id: string, createdAt: string, completedAt: string | null) =>
    rowsOf(
      database,
      `INSERT INTO "tasks"."tasks" ("id", "context_id", "sender_id", "sender_handle", "sender_name", "recipient_id", "recipient_handle", "recipient_name",
                                   "state", "summary", "message_count", "accepted_at", "completed_at", "created_at", "updated_at", "status_timestamp")
       VALUES ($1::text, $1::text, $2, $3, 'Alice', $4, $5, 'Bob', CASE WHEN $7::timestamptz IS NULL THEN 'pending' ELSE 'completed' END, 'seeded', 0,
               $7::timestamptz, $7::timestamptz, $6::timestamptz, COALESCE($7::timestamptz, $6::timestamptz), COALESCE($7::timestamptz, $6::timestamptz))`,
      [id, alice.id, alice.handle, bob.id, bob.handle, createdAt, completedAt],
    );

  beforeAll(async () => {
    database = await openTasksDatabase();
    reads = new AdminOverview(database.dataSource);
  });

  afterAll(async () => {
    await database.close();
  });

  it('counts the tasks created and completed per minute of the last hour, and names the oldest pending task', async () => {
    const [{ minute }] = await rowsOf<{ minute: Date }>(database, `SELECT date_trunc('minute', now() - interval '30 minutes') AS "minute"`, []);
    const at = (seconds: number): string => new Date(minute.getTime() + seconds * 1000).toISOString();
    const oldest = nextTaskId();
    await seed(nextTaskId(), at(5), at(20));
    await seed(nextTaskId(), at(6), at(21));
    await seed(nextTaskId(), at(7), null);
    await seed(oldest, '2001-02-03T04:05:06.000Z', null);
    const overview = await reads.overview();
    expect(overview.per_minute).toHaveLength(60);
    const minutes = overview.per_minute.map((entry) => Date.parse(entry.minute));
    expect(minutes.slice(1).every((value, index) => value - minutes[index] === 60_000)).toBe(true);
    expect(overview.per_minute.find((entry) => entry.minute === minute.toISOString())).toEqual({ minute: minute.toISOString(), created: 3, completed: 2 });
    expect(overview.oldest_pending).toEqual({
      id: oldest,
      created_at: '2001-02-03T04:05:06.000Z',
      sender: alice.handle,
      recipient: bob.handle,
    });
    expect(overview.open_by_state.pending).toBeGreaterThanOrEqual(2);
  });

  it("measures the outbox's lag from its oldest unpublished event", async () => {
    const taskId = nextTaskId();
    await seed(taskId, new Date().toISOString(), null);
    await rowsOf(
      database,
      `INSERT INTO "tasks"."outbox_events" ("id", "subject", "type", "task_id", "payload", "created_at")
       VALUES (gen_random_uuid(), 'relay.events.task.created', 'created', $1, '{}', now() - interval '2 hours')`,
      [taskId],
    );
    const { outbox_lag: lag } = await reads.overview();
    expect(lag.unpublished).toBeGreaterThanOrEqual(1);
    expect(lag.oldest_unpublished_ms).toBeGreaterThanOrEqual(2 * 3600 * 1000);
    expect(lag.oldest_unpublished_ms).toBeLessThan(3 * 3600 * 1000);
  });
});
