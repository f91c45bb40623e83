import { randomBytes, randomInt } from 'node:crypto';
import { TRACE_PARENT_SQL } from '../../apps/tasks/src/tasks/store/sql/chain-facts.sql';
import { createTask, openTasksDatabase, outboxEventsOf, participant, rowsOf, type TasksDatabase } from './support/tasks-database';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** A handoff's trace at the store (docs/chains.md): kept along the chain, named by its events, found by one index range. */
describe('handoff traces at the create write path', () => {
  let database: TasksDatabase;
  const tag = String(randomInt(100000, 999999));

  beforeAll(async () => {
    database = await openTasksDatabase();
  });

  afterAll(async () => {
    await database.pool.query(`DELETE FROM "tasks"."tasks" WHERE "id" LIKE '00' || $1::text || '%'`, [tag]).catch(() => undefined);
    await database.close();
  });

  const traceOf = async (taskId: string): Promise<{ trace_id: string; trace_span_id: string }> =>
    (
      await rowsOf<{ trace_id: string; trace_span_id: string }>(database, `SELECT "trace_id", "trace_span_id" FROM "tasks"."tasks" WHERE "id" = $1`, [taskId])
    )[0];

  it("keeps the caller's trace id on a root and the root's down the chain, and publishes each event in it", async () => {
    const [a, b, c] = [participant('a'), participant('b'), participant('c')];
    const callerTrace = randomBytes(16).toString('hex');
    const root = await createTask(database, a, b, { caller_trace_id: callerTrace });
    const child = await createTask(database, b, c, { parent_task_ids: [root.id], caller_trace_id: randomBytes(16).toString('hex') });
    const [rootTrace, childTrace] = [await traceOf(root.id), await traceOf(child.id)];
    expect(rootTrace.trace_id).toBe(callerTrace);
    expect(childTrace.trace_id).toBe(callerTrace);
    expect(childTrace.trace_span_id).toBe(rootTrace.trace_span_id);
    expect((await outboxEventsOf(database, child.id)).map((event) => event.type)).toEqual(['created']);
    const [row] = await rowsOf<{ trace_parent: string }>(database, `SELECT "trace_parent" FROM "tasks"."outbox_events" WHERE "task_id" = $1`, [child.id]);
    expect(row.trace_parent).toBe(`00-${callerTrace}-${childTrace.trace_span_id}-01`);
    // C names nothing; it received the child in that trace, so its handoff serves the child.
    const linked = await createTask(database, c, participant('d'), { caller_trace_id: callerTrace });
    expect(linked.chain).toEqual({ parent_task_id: child.id, root_task_id: root.id, depth: 2 });
    expect((await traceOf(linked.id)).trace_id).toBe(callerTrace);
    // A root whose caller sent no trace gets a new one.
    const fresh = await createTask(database, a, c);
    expect((await traceOf(fresh.id)).trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect((await traceOf(fresh.id)).trace_id).not.toBe(callerTrace);
  });

  it('finds the parent of a trace by one range of the trace index, reading no more at 40,000 tasks than at 4,000', async () => {
    const [a, b] = [participant('trace-a'), participant('trace-b')];
    const traceId = randomBytes(16).toString('hex');
    const root = await createTask(database, a, b, { caller_trace_id: traceId });
    const client = await database.pool.connect();
    const reads: number[] = [];
    try {
      let seeded = 0;
      for (const size of [4000, 40000]) {
        await client.query(
          `INSERT INTO "tasks"."tasks" ("id", "context_id", "sender_id", "sender_handle", "sender_name", "recipient_id", "recipient_handle", "recipient_name",
                                      "summary", "created_at", "updated_at", "status_timestamp", "trace_id", "trace_span_id")
           SELECT '00' || $1::text || lpad(i::text, 18, '0'), 'trace-ctx-' || $1::text || '-' || i, $2, 'seeder@acme', 'Seeder', $3, 'other@acme', 'Other',
                  'Seeded ' || i, now(), now(), now(), md5(random()::text), substr(md5(random()::text), 1, 16)
             FROM generate_series($4::int, $5::int) AS i`,
          [tag, a.id, b.id, seeded + 1, size],
        );
        seeded = size;
        await client.query(`ANALYZE "tasks"."tasks"`);
        const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${TRACE_PARENT_SQL}`, [
          traceId,
          b.id,
        ]);
        const plan = nodes(rows[0]['QUERY PLAN'][0].Plan);
        const scans = plan.filter((node) => node['Relation Name'] !== undefined);
        expect(scans.map((node) => [node['Node Type'], node['Index Name']])).toEqual([[expect.stringMatching(/Index/), 'tasks_trace_idx']]);
        reads.push(scans[0]['Shared Hit Blocks']! + scans[0]['Shared Read Blocks']!);
        expect((await client.query(TRACE_PARENT_SQL, [traceId, b.id])).rows).toEqual([{ id: root.id }]);
      }
    } finally {
      client.release();
    }
    expect(reads[1]).toBeLessThanOrEqual(reads[0] + 3);
  });
});
