import { randomBytes, randomInt } from 'node:crypto';
import type pg from 'pg';
import { OPEN_HANDOFFS_OF_ORG_SQL } from '../../apps/tasks/src/tasks/store/sql/open-handoffs.sql';
import { openTasksDatabase, type TasksDatabase } from './support/tasks-database';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/**
 * The count behind an org's open-handoffs quota (OPEN_HANDOFFS_OF_ORG_SQL), as the tasks service
 * runs it (a prepared statement on its generic plan): it reads the partial index of open handoffs
 * by their sender's org, counts only the org's open handoffs, and stops at the quota.
 */
describe('the open-handoffs count of an org', () => {
  let database: TasksDatabase;
  let client: pg.PoolClient;
  const suffix = randomBytes(3).toString('hex');
  const busy = `busy-${suffix}`;
  const other = `other-${suffix}`;
  /** Seeded ids are '00' + this + a number: below every real task id, and apart from other runs'. */
  const tag = String(randomInt(100000, 999999));
  let seeded = 0;

  async function seed(org: string, state: string, count: number): Promise<void> {
    await client.query(
      `INSERT INTO "tasks"."tasks" ("id", "context_id", "sender_id", "sender_handle", "sender_name", "recipient_id", "recipient_handle", "recipient_name",
                                  "summary", "state", "created_at", "updated_at", "status_timestamp",
                                  "accepted_at", "completed_at", "rejected_at", "hidden_from_recipient", "hold", "hold_expires_at")
       SELECT '00' || $1::text || lpad(i::text, 18, '0'), 'open-count-ctx-' || $1::text || '-' || i, 'open-count-sender-' || (i % 20),
              'sender' || (i % 20) || '@' || $2::text, 'Sender', 'open-count-recipient', 'recipient@elsewhere', 'Recipient', 'Seeded handoff ' || i,
              $3::text, now(), now(), now(),
              CASE WHEN $3::text IN ('accepted', 'input_required', 'completed') THEN now() END,
              CASE WHEN $3::text = 'completed' THEN now() END,
              CASE WHEN $3::text = 'rejected' THEN now() END,
              $3::text = 'held',
              CASE WHEN $3::text = 'held' THEN '{"rule": "seeded"}'::jsonb END,
              CASE WHEN $3::text = 'held' THEN now() + interval '1 day' END
         FROM generate_series($4::int, $5::int) AS i`,
      [tag, org, state, seeded + 1, seeded + count],
    );
    seeded += count;
  }

  async function counted(org: string, limit: number): Promise<{ open: number; plan: PlanNode }> {
    await client.query(`PREPARE open_count AS ${OPEN_HANDOFFS_OF_ORG_SQL}`);
    try {
      const args = `${client.escapeLiteral(org)}, ${limit}`;
      const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) EXECUTE open_count(${args})`);
      const [answer] = (await client.query<{ open: number }>(`EXECUTE open_count(${args})`)).rows;
      return { open: answer.open, plan: rows[0]['QUERY PLAN'][0].Plan };
    } finally {
      await client.query('DEALLOCATE open_count');
    }
  }

  beforeAll(async () => {
    database = await openTasksDatabase();
    client = await database.pool.connect();
    await client.query(`SET plan_cache_mode = force_generic_plan`);
    await seed(busy, 'pending', 1500);
    await seed(busy, 'held', 200);
    await seed(busy, 'input_required', 100);
    await seed(busy, 'completed', 3000);
    await seed(busy, 'rejected', 500);
    await seed(other, 'accepted', 2000);
    await client.query(`ANALYZE "tasks"."tasks"`);
  }, 60000);

  afterAll(async () => {
    await client?.query(`DELETE FROM "tasks"."tasks" WHERE "id" LIKE $1`, [`00${tag}%`]);
    client?.release();
    await database?.close();
  });

  it('counts only the org’s open handoffs, finished ones and other orgs’ left out', async () => {
    expect((await counted(busy, 100_000)).open).toBe(1800);
    expect((await counted(other, 100_000)).open).toBe(2000);
    expect((await counted(`nobody-${suffix}`, 100_000)).open).toBe(0);
  });

  it('stops at the quota however many are open', async () => {
    expect((await counted(busy, 25)).open).toBe(25);
    expect((await counted(busy, 0)).open).toBe(0);
  });

  it('reads the partial index of open handoffs by their sender’s org, not the table', async () => {
    const { plan } = await counted(busy, 25);
    const scans = nodes(plan).filter((node) => node['Node Type'].includes('Scan'));
    expect(scans.map((node) => node['Index Name'])).toEqual(['tasks_open_sender_org_idx']);
  });
});
