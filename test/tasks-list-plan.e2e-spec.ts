import { randomInt } from 'node:crypto';
import pg from 'pg';
import type { ListRequest } from '@app/contracts';
import { listQuery } from '../apps/tasks/src/tasks/store/list-query';
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
 * An agent with a large share of the tasks, none of them among the newest: a plan that walks the
 * tasks in id order and filters them (what Postgres picks for such an agent from its share of the
 * table, whether it plans each call or keeps a plan) reads every newer task of the others first,
 * more as the table grows; the page read from the agent's own index does not.
 */
describe("an inbox page reads the recipient's own rows, whatever else the tasks table holds", () => {
  let relay: RelayHarness;
  let db: pg.Client;
  let hot: RegisteredTestAgent;
  let sender: RegisteredTestAgent;
  /** Seeded ids are '00' + this + a number: below every real task id, and apart from other runs'. */
  const tag = String(randomInt(100000, 999999));
  const seededId = (i: number): string => `00${tag}${String(i).padStart(18, '0')}`;
  /** The recipient's seeded tasks, oldest first. */
  const hotTasks: number[] = [];
  let seeded = 0;

  /**
   * Tasks up to `size`: in the older nine tenths of the new ones, one in HOT_SHARE to the recipient
   * and another one in HOT_SHARE from it (so a page of either role has many rows to order on both
   * sides); the rest, and all of the newest tenth, from the sender to 500 other agents.
   */
  async function seed(size: number): Promise<void> {
    const lastHot = seeded + Math.floor(((size - seeded) * 9) / 10);
    await db.query(
      `INSERT INTO "tasks"."tasks" ("id", "context_id", "sender_id", "sender_handle", "sender_name", "recipient_id", "recipient_handle", "recipient_name",
                                  "summary", "created_at", "updated_at", "status_timestamp")
       SELECT '00' || $7::text || lpad(i::text, 18, '0'), 'plan-ctx-' || i,
              CASE WHEN i % $9 = 1 AND i <= $8 THEN $3 ELSE $1 END, CASE WHEN i % $9 = 1 AND i <= $8 THEN $4 ELSE $2 END, 'Sender',
              CASE WHEN i % $9 = 0 AND i <= $8 THEN $3 ELSE 'plan-other-' || (i % 500) END,
              CASE WHEN i % $9 = 0 AND i <= $8 THEN $4 ELSE 'other-' || (i % 500) || '@plan' END,
              'Recipient', 'Seeded handoff ' || i, now(), now(), now()
         FROM generate_series($5::int, $6::int) AS i`,
      [sender.agent.id, sender.agent.handle, hot.agent.id, hot.agent.handle, seeded + 1, size, tag, lastHot, HOT_SHARE],
    );
    for (let i = seeded + 1; i <= lastHot; i++) if (i % HOT_SHARE === 0) hotTasks.push(i);
    seeded = size;
    await db.query(`ANALYZE "tasks"."tasks"`);
  }

  /**
   * The plans of the service's inbox page for the recipient, prepared: of its first run (a plan for
   * this caller) and of its seventh (the plan Postgres keeps for the statement).
   */
  async function plans(page: Pick<ListRequest, 'role' | 'order'> = { role: 'recipient', order: 'created' }): Promise<PlanNode[]> {
    const query = listQuery({ caller_id: hot.agent.id, ...page, limit: 50, history_length: 0, include_artifacts: false });
    const args = query.values.map((value) => (typeof value === 'number' ? String(value) : db.escapeLiteral(String(value)))).join(', ');
    const explain = async (): Promise<PlanNode> => {
      const { rows } = await db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE inbox_page(${args})`);
      return rows[0]['QUERY PLAN'][0].Plan;
    };
    await db.query(`PREPARE inbox_page AS ${query.text}`);
    try {
      const first = await explain();
      for (let run = 0; run < 5; run++) await db.query(`EXECUTE inbox_page(${args})`);
      return [first, await explain()];
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
      for (const plan of await plans()) {
        const scan = nodes(plan).find((node) => node['Relation Name'] === 'tasks' && node.Alias === 't');
        expect(scan).toMatchObject({ 'Node Type': 'Index Scan', 'Index Name': 'tasks_recipient_created_idx' });
        expect(scan?.['Rows Removed by Filter'] ?? 0).toBe(0);
        buffers.push(plan['Shared Hit Blocks'] + plan['Shared Read Blocks']);
      }
    }
    // 51 rows, their unread counts and the index's few levels: a few hundred pages at most, at either size.
    expect(Math.max(...buffers)).toBeLessThan(400);
    expect(Math.max(...buffers.slice(2))).toBeLessThanOrEqual(Math.max(...buffers.slice(0, 2)) + 5);
  });

  it('reads a page of either role (A2A ListTasks) from each side’s own index, never sorting all the caller’s tasks', async () => {
    const buffers: number[] = [];
    for (const size of [4000, 40000]) {
      if (seeded < size) await seed(size);
      for (const plan of await plans({ role: 'either', order: 'status' })) {
        const scans = nodes(plan).filter((node) => node['Relation Name'] === 'tasks');
        expect(scans.map((scan) => scan['Index Name']).sort()).toEqual(['tasks_recipient_status_idx', 'tasks_sender_status_idx']);
        for (const scan of scans) expect(scan['Rows Removed by Filter'] ?? 0).toBe(0);
        buffers.push(plan['Shared Hit Blocks'] + plan['Shared Read Blocks']);
      }
    }
    expect(Math.max(...buffers)).toBeLessThan(400);
    expect(Math.max(...buffers.slice(2))).toBeLessThanOrEqual(Math.max(...buffers.slice(0, 2)) + 5);
  });

  it('pages through the recipient’s inbox over HTTP, newest first, with none of the other agents’ tasks', async () => {
    if (seeded === 0) await seed(4000);
    const newest = [...hotTasks].reverse().map(seededId);
    const first = await ok(relay.url, hot.api_key, 'tasks/list', { filter: { role: 'recipient' }, page: { limit: 50 } });
    expect(first.items.map((item: { task_id: string }) => item.task_id)).toEqual(newest.slice(0, 50));
    const second = await ok(relay.url, hot.api_key, 'tasks/list', { filter: { role: 'recipient' }, page: { limit: 50, cursor: first.next_cursor } });
    expect(second.items.map((item: { task_id: string }) => item.task_id)).toEqual(newest.slice(50, 100));
  });
});

/** One seeded task in this many is the recipient's (among the older ones). */
const HOT_SHARE = 10;
