import { randomBytes, randomInt } from 'node:crypto';
import type pg from 'pg';
import { CHAIN_FACTS_SQL, PAIR_RECENT_SQL } from '../../apps/tasks/src/tasks/store/sql/chain-facts.sql';
import { createTask, openTasksDatabase, participant, type TasksDatabase } from './support/tasks-database';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/**
 * The plan of the statement a linked create reads its chain with (CHAIN_FACTS_SQL), as the tasks
 * service runs it: a prepared statement on its generic plan, so the plan is chosen from the
 * statistics alone, not from the values. Whether the statistics know the caller's history or not,
 * the named parent is found by the primary key and the trace's handoffs by the trace index, and
 * the reads do not grow with the caller's history.
 */
describe("the plan of a linked create's chain read, whatever the statistics", () => {
  let database: TasksDatabase;
  let client: pg.PoolClient;
  const caller = participant('plan-caller');
  /** Seeded ids are '00' + this + a number: below every real task id, and apart from other runs'. */
  const tag = String(randomInt(100000, 999999));
  let seeded = 0;

  /** The caller's handoffs up to `size`, sent a day ago to 500 others (out of every pair's minute). */
  async function seed(size: number): Promise<void> {
    await client.query(
      `INSERT INTO "tasks"."tasks" ("id", "context_id", "sender_id", "sender_handle", "sender_name", "recipient_id", "recipient_handle", "recipient_name",
                                  "summary", "created_at", "updated_at", "status_timestamp")
       SELECT '00' || $3::text || lpad(i::text, 18, '0'), 'chain-plan-ctx-' || $3::text || '-' || i, $1, $2, 'Caller',
              'chain-plan-other-' || (i % 500), 'other-' || (i % 500) || '@plan', 'Other', 'Seeded handoff ' || i,
              now() - interval '1 day', now() - interval '1 day', now() - interval '1 day'
         FROM generate_series($4::int, $5::int) AS i`,
      [caller.id, caller.handle, tag, seeded + 1, size],
    );
    seeded = size;
  }

  const literal = (value: string | null): string => (value === null ? 'NULL' : client.escapeLiteral(value));

  /** EXPLAIN (ANALYZE, BUFFERS) of CHAIN_FACTS_SQL's generic plan, in a transaction rolled back (it takes the chain's lock). */
  async function explainChainFacts(traceId: string | null, named: string[], recipientId: string): Promise<{ plan: PlanNode; parentId: string | null }> {
    const args = [
      literal(traceId),
      literal(caller.id),
      `ARRAY[${named.map(literal).join(', ')}]::text[]`,
      literal(recipientId),
      `${literal(new Date(Date.now() - 60_000).toISOString())}::timestamptz`,
      '30',
      'true',
    ].join(', ');
    await client.query('BEGIN');
    try {
      await client.query(`PREPARE chain_facts_plan AS ${CHAIN_FACTS_SQL}`);
      const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE chain_facts_plan(${args})`,
      );
      const [answer] = (await client.query<{ id: string | null }>(`EXECUTE chain_facts_plan(${args})`)).rows;
      return { plan: rows[0]['QUERY PLAN'][0].Plan, parentId: answer.id };
    } finally {
      await client.query('ROLLBACK');
      await client.query('DEALLOCATE chain_facts_plan');
    }
  }

  beforeAll(async () => {
    database = await openTasksDatabase();
    client = await database.pool.connect();
    await client.query(`SET plan_cache_mode = force_generic_plan`);
  });

  afterAll(async () => {
    await client?.query(`DELETE FROM "tasks"."tasks" WHERE "id" LIKE '00' || $1::text || '%'`, [tag]).catch(() => undefined);
    await client?.query(`RESET plan_cache_mode`).catch(() => undefined);
    client?.release();
    await database?.close();
  });

  it('finds the named parent by the primary key and the traced one by the trace index, reading no more at 40,000 of the caller’s handoffs than at 4,000', async () => {
    const traceId = randomBytes(16).toString('hex');
    const recipient = participant('plan-recipient');
    const root = await createTask(database, participant('plan-lead'), caller, { caller_trace_id: traceId });
    const reads: Record<string, number[]> = {};
    for (const size of [4000, 40000]) {
      await seed(size);
      // First with statistics that have not seen the new handoffs, then with current ones.
      for (const statistics of ['stale', 'current']) {
        if (statistics === 'current') await client.query(`ANALYZE "tasks"."tasks"`);
        for (const [linkedBy, traced, named] of [
          ['named', null, [root.id]],
          ['traced', traceId, []],
        ] as const) {
          const { plan, parentId } = await explainChainFacts(traced, [...named], recipient.id);
          expect(parentId).toBe(root.id);
          const all = nodes(plan);
          expect(all.filter((node) => node['Node Type'] === 'Seq Scan')).toEqual([]);
          const indexes = all.map((node) => node['Index Name']).filter((name): name is string => name !== undefined);
          // The pair's index is read only for the pair's range of the last minute, never for its whole history; no participant's index is read.
          const pairScans = all.filter((node) => /^tasks_(sender|recipient|pair)_created_at_idx$/.test(node['Index Name'] ?? ''));
          expect(pairScans.map((node) => [node['Index Name'], node['Index Cond']])).toEqual([
            ['tasks_pair_created_at_idx', expect.stringMatching(/sender_id = .*recipient_id = .*created_at >/s)],
          ]);
          if (linkedBy === 'named') {
            expect(all).toContainEqual(expect.objectContaining({ 'Index Name': 'tasks_pkey', 'Index Cond': '(id = c.id)' }));
          } else {
            expect(indexes).toContain('tasks_trace_idx');
          }
          const key = `${linkedBy} ${statistics}`;
          reads[key] = [...(reads[key] ?? []), plan['Shared Hit Blocks']! + plan['Shared Read Blocks']!];
        }
      }
    }
    // A few index levels more at most: the read does not scan the caller's history.
    for (const [small, large] of Object.values(reads)) expect(large).toBeLessThanOrEqual(small + 10);
  });

  it("counts a pair's handoffs of the last minute up to the pair's limit and no further, keeping the oldest", async () => {
    const recipient = participant('pair-recipient');
    await client.query(
      `INSERT INTO "tasks"."tasks" ("id", "context_id", "sender_id", "sender_handle", "sender_name", "recipient_id", "recipient_handle", "recipient_name",
                                  "summary", "created_at", "updated_at", "status_timestamp")
       SELECT '00' || $3::text || '9' || lpad(i::text, 17, '0'), 'chain-pair-ctx-' || $3::text || '-' || i, $1, 'pair-sender@plan', 'Sender',
              $2, 'pair-recipient@plan', 'Recipient', 'Echo ' || i,
              now() - make_interval(secs => i), now(), now()
         FROM generate_series(1, 50) AS i`,
      [caller.id, recipient.id, tag],
    );
    const values = [caller.id, recipient.id, new Date(Date.now() - 60_000), 30];
    const { rows } = await client.query<{ count: number; oldest: Date }>(PAIR_RECENT_SQL, values);
    const [{ oldest }] = (
      await client.query<{ oldest: Date }>(`SELECT min("created_at") AS "oldest" FROM "tasks"."tasks" WHERE "sender_id" = $1 AND "recipient_id" = $2`, [
        caller.id,
        recipient.id,
      ])
    ).rows;
    expect(rows).toEqual([{ count: 30, oldest }]);
    const { rows: plans } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode & { 'Actual Rows': number } }> }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${PAIR_RECENT_SQL}`,
      values,
    );
    const scans = nodes(plans[0]['QUERY PLAN'][0].Plan).filter((node) => node['Relation Name'] === 'tasks') as Array<PlanNode & { 'Actual Rows': number }>;
    expect(scans.map((scan) => scan['Actual Rows'])).toEqual([30]);
  });
});
