import { randomInt } from 'node:crypto';
import pg from 'pg';
import { listQuery } from '../apps/tasks/src/tasks/list-query';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { ok } from './support/json-rpc';
import { RelayHarness } from './support/relay-harness';
import { testDatabaseUrl } from './support/test-env';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Alias?: string;
  'Index Name'?: string;
  'Rows Removed by Filter'?: number;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/**
 * An agent whose tasks are all older than everyone else's: a plan that walks the tasks in id order
 * and filters them (what Postgres planned for such an agent from its share of the table) reads every
 * newer task of the others, more as the table grows; the page read from the agent's own index does not.
 */
describe("an inbox page reads the recipient's own rows, whatever else the tasks table holds", () => {
  let relay: RelayHarness;
  let db: pg.Client;
  let hot: RegisteredTestAgent;
  let sender: RegisteredTestAgent;
  /** Seeded ids are '00' + this + a number: below every real task id, and apart from other runs'. */
  const tag = String(randomInt(100000, 999999));
  const seededId = (i: number): string => `00${tag}${String(i).padStart(18, '0')}`;
  let seeded = 0;

  /** Tasks up to `size`: the first HOT_TASKS to the recipient, the newer ones to 500 other agents. */
  async function seed(size: number): Promise<void> {
    await db.query(
      `INSERT INTO "tasks"."tasks" ("id", "context_id", "sender_id", "sender_handle", "sender_name", "recipient_id", "recipient_handle", "recipient_name",
                                  "summary", "created_at", "updated_at", "status_timestamp")
       SELECT '00' || $7::text || lpad(i::text, 18, '0'), 'plan-ctx-' || i, $1, $2, 'Sender',
              CASE WHEN i <= $8 THEN $3 ELSE 'plan-other-' || (i % 500) END,
              CASE WHEN i <= $8 THEN $4 ELSE 'other-' || (i % 500) || '@plan' END,
              'Recipient', 'Seeded handoff ' || i, now(), now(), now()
         FROM generate_series($5::int, $6::int) AS i`,
      [sender.agent.id, sender.agent.handle, hot.agent.id, hot.agent.handle, seeded + 1, size, tag, HOT_TASKS],
    );
    seeded = size;
    await db.query(`ANALYZE "tasks"."tasks"`);
  }

  /** The plan of the service's inbox page for the recipient, prepared and run until Postgres keeps one plan for it. */
  async function settledPlan(): Promise<PlanNode> {
    const query = listQuery({ caller_id: hot.agent.id, role: 'recipient', limit: 50, order: 'created', history_length: 0, include_artifacts: false });
    const args = query.values.map((value) => (typeof value === 'number' ? String(value) : db.escapeLiteral(String(value)))).join(', ');
    await db.query(`PREPARE inbox_page AS ${query.text}`);
    try {
      for (let run = 0; run < 6; run++) await db.query(`EXECUTE inbox_page(${args})`);
      const { rows } = await db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE inbox_page(${args})`);
      return rows[0]['QUERY PLAN'][0].Plan;
    } finally {
      await db.query('DEALLOCATE inbox_page');
    }
  }

  beforeAll(async () => {
    relay = await RelayHarness.start();
    db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    hot = await registerAgent(relay, { handle: uniqueHandle('hot', 'acme'), name: 'Hot' });
    sender = await registerAgent(relay, { handle: uniqueHandle('sender', 'acme'), name: 'Sender' });
  });

  afterAll(async () => {
    await db?.query(`DELETE FROM "tasks"."tasks" WHERE "id" LIKE '00' || $1::text || '%'`, [tag]).catch(() => undefined);
    await db?.end();
    await relay?.stop();
  });

  it('walks the recipient index, filters out no other agent’s task and reads as many pages at 40,000 tasks as at 4,000', async () => {
    const buffers: number[] = [];
    for (const size of [4000, 40000]) {
      await seed(size);
      const plan = await settledPlan();
      const scan = nodes(plan).find((node) => node['Relation Name'] === 'tasks' && node.Alias === 't');
      expect(scan).toMatchObject({ 'Node Type': 'Index Scan', 'Index Name': 'tasks_recipient_created_idx' });
      expect(scan?.['Rows Removed by Filter'] ?? 0).toBe(0);
      buffers.push(plan['Shared Hit Blocks'] + plan['Shared Read Blocks']);
    }
    // 51 rows, their unread counts and the index's few levels: a few hundred pages at most, at either size.
    expect(Math.max(...buffers)).toBeLessThan(400);
    expect(buffers[1]).toBeLessThanOrEqual(buffers[0] + 5);
  });

  it('pages through the recipient’s inbox over HTTP, newest first, with none of the other agents’ tasks', async () => {
    if (seeded === 0) await seed(4000);
    const first = await ok(relay.url, hot.api_key, 'tasks/list', { filter: { role: 'recipient' }, page: { limit: 50 } });
    expect(first.items.map((item: { task_id: string }) => item.task_id)).toEqual(Array.from({ length: 50 }, (_, i) => seededId(HOT_TASKS - i)));
    const second = await ok(relay.url, hot.api_key, 'tasks/list', { filter: { role: 'recipient' }, page: { limit: 50, cursor: first.next_cursor } });
    expect(second.items.map((item: { task_id: string }) => item.task_id)).toEqual(Array.from({ length: 50 }, (_, i) => seededId(HOT_TASKS - 50 - i)));
  });
});

/** The recipient's tasks: the oldest of the table. */
const HOT_TASKS = 200;
