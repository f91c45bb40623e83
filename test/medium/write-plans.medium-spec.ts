import { randomInt } from 'node:crypto';
import type pg from 'pg';
import { explainWrites, type WritePlan } from '../../scripts/bench/write-plans';
import { createTask, openTasksDatabase, participant, rowsOf, type TasksDatabase } from './support/tasks-database';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

const planOf = (write: WritePlan): PlanNode => (write.plan as Array<{ Plan: PlanNode }>)[0].Plan;

/**
 * The bench's plans of the service's writes (create, append, accept), each run with EXPLAIN
 * ANALYZE in a transaction rolled back: every lookup of the tables that grow goes through an
 * index, the buffers do not grow with the table, and nothing stays written.
 */
describe('the plans of the create, append and transition statements, rolled back', () => {
  let database: TasksDatabase;
  let client: pg.PoolClient;
  const sender = participant('plan-sender');
  const recipient = participant('plan-recipient');
  const seeder = participant('plan-seeder');
  /** Seeded ids are '00' + this + a number: below every real task id, and apart from other runs'. */
  const tag = String(randomInt(100000, 999999));
  let seeded = 0;

  /** Tasks up to `size` from another sender, one in ten to the recipient, each in a context of its own. */
  async function seed(size: number): Promise<void> {
    await client.query(
      `INSERT INTO "tasks"."tasks" ("id", "context_id", "sender_id", "sender_handle", "sender_name", "recipient_id", "recipient_handle", "recipient_name",
                                  "summary", "created_at", "updated_at", "status_timestamp")
       SELECT '00' || $5::text || lpad(i::text, 18, '0'), 'write-plan-ctx-' || $5::text || '-' || i, $1, $2, 'Seeder',
              CASE WHEN i % 10 = 0 THEN $3 ELSE 'write-plan-other-' || (i % 500) END,
              CASE WHEN i % 10 = 0 THEN $4 ELSE 'other-' || (i % 500) || '@plan' END,
              'Recipient', 'Seeded handoff ' || i, now(), now(), now()
         FROM generate_series($6::int, $7::int) AS i`,
      [seeder.id, seeder.handle, recipient.id, recipient.handle, tag, seeded + 1, size],
    );
    seeded = size;
    await client.query(`ANALYZE "tasks"."tasks"`);
  }

  beforeAll(async () => {
    database = await openTasksDatabase();
    client = await database.pool.connect();
  });

  afterAll(async () => {
    await client?.query(`DELETE FROM "tasks"."tasks" WHERE "id" LIKE '00' || $1::text || '%'`, [tag]).catch(() => undefined);
    client?.release();
    await database?.close();
  });

  it('looks every row up by an index, reads no more at 40,000 tasks than at 4,000, and leaves nothing written', async () => {
    const task = await createTask(database, sender, recipient);
    const reads: Record<string, number[]> = { create: [], append: [], transition: [] };
    for (const size of [4000, 40000]) {
      await seed(size);
      const writes = await explainWrites(client, { sender, recipient }, task.id);
      expect(writes.map((write) => write.operation)).toEqual(['create', 'append', 'transition']);
      // The fewest pages of three runs: other tests writing the same tables meanwhile add reads of their own (visibility checks of rows they just wrote).
      const again = [await explainWrites(client, { sender, recipient }, task.id), await explainWrites(client, { sender, recipient }, task.id)];
      for (const [index, write] of writes.entries()) {
        const scans = nodes(planOf(write)).filter((node) => node['Relation Name'] !== undefined && node['Node Type'] !== 'ModifyTable');
        expect(scans.filter((scan) => !/Index/.test(scan['Node Type']))).toEqual([]);
        expect(write.walRecords).toBeGreaterThan(0);
        reads[write.operation].push(Math.min(...[write, ...again.map((run) => run[index])].map((run) => run.sharedHit + run.sharedRead)));
      }
      const [create, append, transition] = writes;
      expect(create.indexes).toEqual(expect.arrayContaining(['tasks_context_idx', 'idempotency_keys_pkey']));
      expect(create.nodes).toEqual(expect.arrayContaining(['Insert on tasks', 'Insert on messages', 'Insert on audit_log', 'Insert on outbox_events']));
      expect(append.indexes).toContain('tasks_pkey');
      expect(append.nodes).toEqual(expect.arrayContaining(['Update on tasks', 'Insert on messages', 'Insert on idempotency_keys']));
      expect(transition.indexes).toContain('tasks_pkey');
      expect(transition.nodes).toEqual(expect.arrayContaining(['Update on tasks', 'Insert on audit_log', 'Insert on outbox_events']));
      expect(transition.nodes).not.toContain('Insert on messages');
    }
    // A few index levels more at most: the writes' lookups do not scan what the table holds.
    for (const [small, large] of Object.values(reads)) expect(large).toBeLessThanOrEqual(small + 10);

    const [stored] = await rowsOf(database, `SELECT "state", "version", "message_count" FROM "tasks"."tasks" WHERE "id" = $1`, [task.id]);
    expect(stored).toEqual({ state: 'pending', version: 1, message_count: 1 });
    const [left] = await rowsOf(
      database,
      `SELECT (SELECT count(*) FROM "tasks"."tasks" WHERE "sender_id" = $1 OR "sender_id" = $2)::int AS "tasks",
              (SELECT count(*) FROM "tasks"."tasks" WHERE "id" LIKE '00' || $3::text || '%')::int AS "seeded",
              (SELECT count(*) FROM "tasks"."messages" WHERE "author_id" = $2)::int AS "replies",
              (SELECT count(*) FROM "tasks"."audit_log" WHERE "actor_id" = $2)::int AS "audit",
              (SELECT count(*) FROM "tasks"."idempotency_keys" WHERE "sender_id" IN ($1, $2))::int AS "keys",
              (SELECT count(*) FROM "tasks"."outbox_events" WHERE "payload"->>'sender' = $4)::int AS "events"`,
      [sender.id, recipient.id, tag, sender.handle],
    );
    expect(left).toEqual({ tasks: 1, seeded: 40000, replies: 0, audit: 0, keys: 0, events: 1 });
  });
});
