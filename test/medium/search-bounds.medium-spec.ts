import { randomInt } from 'node:crypto';
import type pg from 'pg';
import { Client } from 'pg';
import { TASK_LIMITS, type SendRequest } from '@app/contracts';
import { SearchAdminTasks } from '../../apps/tasks/src/tasks/admin/search-tasks';
import { SEARCH_CONCURRENCY, TaskSearch } from '../../apps/tasks/src/tasks/admin/task-search';
import { SearchTasks } from '../../apps/tasks/src/tasks/use-cases/search-tasks';
import { createTask, openTasksDatabase, participant, textParts, type TasksDatabase } from './support/tasks-database';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Filter?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

interface Statement {
  text: string;
  values: unknown[];
}

/**
 * `tasks/search` (and the relay-wide `admin.search`) on messages of hundreds of KB: the statements
 * find matches through the search index (no scan of the messages, no tsvector computed again for
 * each of a participant's messages), and at most SEARCH_CONCURRENCY searches hold a connection at
 * once; the others are refused as `overloaded`, and a bystander's send keeps its connections.
 */
describe('the search statements: index-backed, and a share of the pool of their own', () => {
  let database: TasksDatabase;
  let reads: { search: SearchAdminTasks['search']; searchForAgent: SearchTasks['search'] };
  let observer: Client;
  const alice = participant('search-alice');
  const bob = participant('search-bob');
  const tag = String(randomInt(100000, 999999));
  const word = `narwhal${tag}`;
  let taskId: string;
  /** Statements that searched, as the service ran them, while `capture` is on. */
  const captured: Statement[] = [];
  let capture = false;
  let restore: () => void = () => undefined;

  /** Text parts of about 400 KB of distinct short words, `word` among the first ones. */
  function largeParts(message: number): SendRequest['message']['parts'] {
    const parts: string[] = [];
    for (let part = 0; part < 4; part += 1) {
      const words = part === 0 ? [`Batch ${message} of the ${word} import:`] : [];
      let length = words.join(' ').length;
      for (let index = 0; length < TASK_LIMITS.textPartChars - 1000; index += 1) {
        const next = `m${message.toString(36)}p${part}w${index.toString(36)}`;
        words.push(next);
        length += next.length + 1;
      }
      parts.push(words.join(' '));
    }
    return parts.flatMap((text) => textParts(text));
  }

  async function explain(client: pg.PoolClient | Client, statement: Statement): Promise<PlanNode[]> {
    const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.values);
    return nodes(rows[0]['QUERY PLAN'][0].Plan);
  }

  beforeAll(async () => {
    database = await openTasksDatabase();
    // One search for both, as in the service: they share its limit of searches at once.
    const taskSearch = new TaskSearch(database.dataSource);
    const [adminSearch, agentSearch] = [new SearchAdminTasks(taskSearch), new SearchTasks(taskSearch)];
    reads = { search: (request) => adminSearch.search(request), searchForAgent: (request) => agentSearch.search(request) };
    observer = new Client({ connectionString: process.env.RELAY_MEDIUM_DATABASE_URL });
    await observer.connect();
    // Other tasks, each with a short message, so that the planner weighs a table of some size.
    await observer.query(
      `WITH seeded AS (
         INSERT INTO "tasks"."tasks" ("id", "context_id", "sender_id", "sender_handle", "sender_name", "recipient_id", "recipient_handle", "recipient_name",
                                     "summary", "message_count", "created_at", "updated_at", "status_timestamp")
         SELECT '00' || $1::text || lpad(i::text, 18, '0'), 'search-bounds-ctx-' || $1::text || '-' || i, 'search-other-' || (i % 200), 'other@plan', 'Other',
                'search-other-' || (i % 300), 'another@plan', 'Another', 'Seeded note ' || i, 1, now(), now(), now()
           FROM generate_series(1, 5000) AS i
         RETURNING "id", "sender_id", "summary")
       INSERT INTO "tasks"."messages" ("task_id", "sequence_no", "id", "author", "author_id", "from_handle", "body", "parts", "size_bytes")
       SELECT "id", 1, 'seeded-' || "id", 'sender', "sender_id", 'other@plan', "summary", jsonb_build_array(jsonb_build_object('kind', 'text', 'text', "summary" || ' about imports')), 64
         FROM seeded`,
      [tag],
    );
    taskId = (await createTask(database, alice, bob, { message: { parts: largeParts(0) } } as Partial<SendRequest>)).id;
    for (let message = 1; message < 24; message += 1) {
      await database.sendTask.send({ caller: alice, task_id: taskId, message: { parts: largeParts(message) } } as SendRequest);
    }
    await observer.query(`ANALYZE "tasks"."tasks"`);
    await observer.query(`ANALYZE "tasks"."messages"`);

    // Record what the service sends to Postgres: every query of the pool's clients goes through this prototype.
    const client = await database.pool.connect();
    const prototype = Object.getPrototypeOf(client) as { query: (...args: unknown[]) => unknown };
    client.release();
    const original = prototype.query;
    prototype.query = function (this: unknown, ...args: unknown[]) {
      const [text, values] = args;
      if (capture && typeof text === 'string' && text.includes('websearch_to_tsquery')) captured.push({ text, values: (values as unknown[]) ?? [] });
      return original.apply(this, args);
    };
    restore = () => {
      prototype.query = original;
    };
  }, 600_000);

  afterAll(async () => {
    restore();
    await observer?.query(`DELETE FROM "tasks"."tasks" WHERE "id" LIKE '00' || $1::text || '%' OR "id" = $2`, [tag, taskId ?? '']).catch(() => undefined);
    await observer?.end();
    await database?.close();
  });

  it("finds the messages through the search index, for a participant's search and relay-wide, and reads no message whole to match it", async () => {
    captured.length = 0;
    capture = true;
    const forAlice = await reads.searchForAgent({ caller_id: alice.id, query: word });
    const forBob = await reads.searchForAgent({ caller_id: bob.id, query: word, role: 'recipient' });
    const relayWide = await reads.search({ query: word });
    capture = false;
    for (const reply of [forAlice, forBob]) {
      expect(reply.items.map((item) => item.task.id)).toEqual([taskId]);
      expect(reply.items[0].highlights).toHaveLength(3);
      expect(reply.items[0].highlights[0]).toMatchObject({ source: 'message', fragments: expect.arrayContaining([{ text: word, match: true }]) });
    }
    expect(relayWide.items.map((item) => item.task.id)).toEqual([taskId]);

    expect(captured.length).toBeGreaterThanOrEqual(3);
    const client = await database.pool.connect();
    try {
      for (const statement of captured) {
        const plan = await explain(client, statement);
        const messageScans = plan.filter((node) => node['Relation Name'] === 'messages');
        const described = messageScans.map((node) => `${node['Node Type']} ${node['Index Name'] ?? ''} ${node.Filter ?? ''}`);
        // Never all the messages, and never the tsvector of each message of a task computed to find the matches.
        expect(described.filter((scan) => /Seq Scan|message_search_text|jsonb_path_query_array/.test(scan))).toEqual([]);
      }
      // The statements that find and rank the matches (the others make highlights of them) read the search index.
      const finding = captured.filter((statement) => statement.text.includes('ts_rank') && !statement.text.includes('ts_headline'));
      expect(finding.length).toBeGreaterThanOrEqual(3);
      for (const statement of finding) {
        const plan = await explain(client, statement);
        expect(plan.filter((node) => node['Index Name'] === 'messages_text_search_idx').length).toBeGreaterThan(0);
      }
    } finally {
      client.release();
    }
  }, 120_000);

  it('runs at most SEARCH_CONCURRENCY searches at once and refuses the others as overloaded, while a bystander sends', async () => {
    const outcomes: string[] = [];
    let peak = 0;
    let searching = true;
    const search = async (index: number): Promise<void> => {
      try {
        const reply =
          index % 3 === 2
            ? await reads.search({ query: word })
            : await reads.searchForAgent({ caller_id: index % 3 === 0 ? alice.id : bob.id, query: `${word} import` });
        outcomes.push(reply.items.length === 1 ? 'found' : `found ${reply.items.length}`);
      } catch (error) {
        outcomes.push((error as { reason?: string }).reason ?? String(error));
      }
    };
    /** Keeps 16 searches asked for at once until the bystander's send is done. */
    const load = (async () => {
      for (let round = 0; searching || round < 2; round += 1) await Promise.all(Array.from({ length: 16 }, (_, index) => search(index)));
    })();
    const watch = (async () => {
      while (searching) {
        const { rows } = await observer.query<{ active: number }>(
          `SELECT count(*)::int AS "active" FROM pg_stat_activity
           WHERE "datname" = current_database() AND "state" <> 'idle' AND "query" LIKE '%websearch_to_tsquery%' AND "pid" <> pg_backend_pid()`,
        );
        peak = Math.max(peak, rows[0].active);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();

    const carol = participant('search-carol');
    const dave = participant('search-dave');
    const started = Date.now();
    const sent = await Promise.race([
      database.sendTask.send({ caller: carol, recipient: dave, message: { parts: textParts('a bystander asks for a review') } } as SendRequest),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the bystander send did not complete within 30 s')), 30_000)),
    ]);
    const sendMs = Date.now() - started;
    searching = false;
    await load;
    await watch;

    console.log(`bystander send ${sendMs} ms; ${outcomes.length} searches, ${outcomes.filter((o) => o === 'found').length} answered; peak ${peak} at once`);
    expect(sent.created).toBe(true);
    expect(outcomes.filter((outcome) => outcome !== 'found' && outcome !== 'overloaded')).toEqual([]);
    expect(outcomes).toContain('found');
    expect(outcomes).toContain('overloaded');
    expect(peak).toBeLessThanOrEqual(SEARCH_CONCURRENCY);
  }, 300_000);
});
