/**
 * The operator console's reads on a big relay: seeds a database of its own with
 * CONSOLE_BENCH_TASKS tasks (1 000 000 by default, one message each, 1000 agents) with
 * generate_series, then times the admin list and search as the tasks service runs them (their
 * SQL, on their pool; NATS and HTTP left out) and prints p50/p99 and the plans.
 *
 *   npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/agentrelay_console_bench node dist/scripts/bench/console-queries.js
 *
 * The database is created when missing and seeded once; run again to time again. Never point it
 * at a relay's own database: the seeded tasks would show in its console.
 *
 * With CONSOLE_BENCH_URL and CONSOLE_BENCH_ADMIN_TOKEN (a relay whose services use this database),
 * it also times the admin API calls the console's live page makes, through the edge: the first load
 * (`GET /admin/tasks?limit=50`) and one filter.
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { ensureDatabaseExists, pgPoolOf } from '@app/database';
import { tasksDataSourceOptions } from '../../apps/tasks/src/database/data-source';
import { ListAdminTasks } from '../../apps/tasks/src/tasks/admin/list-tasks';
import { SearchAdminTasks } from '../../apps/tasks/src/tasks/admin/search-tasks';
import { TaskSearch } from '../../apps/tasks/src/tasks/admin/task-search';
import { migrateAllSchemas } from '../migrate-all';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/agentrelay_console_bench';
const TASKS = Number(process.env.CONSOLE_BENCH_TASKS ?? 1_000_000);
const RUNS = Number(process.env.CONSOLE_BENCH_RUNS ?? 200);
const AGENTS = 1000;

const SEED_SQL = `
INSERT INTO "tasks"."tasks" ("id", "context_id", "sender_id", "sender_handle", "sender_name", "recipient_id", "recipient_handle", "recipient_name",
  "state", "intent", "summary", "message_count", "accepted_at", "completed_at", "cancelled_at", "failed_at", "rejected_at", "created_at", "updated_at", "status_timestamp")
SELECT '01' || upper(lpad(to_hex(i), 24, '0')), 'ctx-' || (i / 5), 'agent-' || (i % ${AGENTS}), 'agent' || (i % ${AGENTS}) || '@bench', 'Agent ' || (i % ${AGENTS}),
  'agent-' || ((i * 7 + 3) % ${AGENTS}), 'agent' || ((i * 7 + 3) % ${AGENTS}) || '@bench', 'Agent ' || ((i * 7 + 3) % ${AGENTS}),
  s.state, (ARRAY['inform', 'ask_question', 'inform', 'inform'])[i % 4 + 1], s.summary, 1,
  CASE WHEN s.state IN ('accepted', 'input_required', 'completed', 'failed') THEN s.at END,
  CASE WHEN s.state = 'completed' THEN s.at END, CASE WHEN s.state = 'cancelled' THEN s.at END,
  CASE WHEN s.state = 'failed' THEN s.at END, CASE WHEN s.state = 'rejected' THEN s.at END,
  s.at, s.at, s.at
FROM generate_series($1::int, $2::int) i
CROSS JOIN LATERAL (SELECT
  (ARRAY['completed', 'completed', 'completed', 'completed', 'completed', 'completed', 'pending', 'accepted', 'cancelled', 'rejected', 'failed', 'input_required'])[i % 12 + 1] AS "state",
  now() - make_interval(secs => ($3::int - i) * 0.5) AS "at",
  'Refactor the ' || (ARRAY['users', 'billing', 'search', 'auth', 'payments'])[i % 5 + 1] || ' API, ticket ' || i || ' marker' || (i % 10000) AS "summary") s`;

const SEED_MESSAGES_SQL = `
INSERT INTO "tasks"."messages" ("task_id", "sequence_no", "id", "author", "author_id", "from_handle", "body", "parts", "created_at", "size_bytes")
SELECT t."id", 1, 'm-' || t."id", 'sender', t."sender_id", t."sender_handle", t."summary",
  jsonb_build_array(jsonb_build_object('kind', 'text', 'text', t."summary")), t."created_at", 2 * octet_length(t."summary") + 40
FROM "tasks"."tasks" t WHERE t."id" >= $1 AND t."id" <= $2`;

/** The admin reads the scenarios time. */
interface Reads {
  list: ListAdminTasks['list'];
  search: SearchAdminTasks['search'];
}

interface Scenario {
  name: string;
  run: (reads: Reads) => Promise<unknown>;
  /** Fewer runs for a query that ranks many thousands of matches. */
  runs?: number;
}

function percentile(sorted: number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))];
}

async function seed(dataSource: DataSource): Promise<void> {
  const [{ count }] = (await dataSource.query(`SELECT count(*)::int AS "count" FROM "tasks"."tasks"`)) as Array<{ count: number }>;
  if (count >= TASKS) return;
  const batch = 100_000;
  for (let from = count + 1; from <= TASKS; from += batch) {
    const to = Math.min(TASKS, from + batch - 1);
    await dataSource.query(SEED_SQL, [from, to, TASKS]);
    const id = (i: number): string => `01${i.toString(16).toUpperCase().padStart(24, '0')}`;
    await dataSource.query(SEED_MESSAGES_SQL, [id(from), id(to)]);
    console.log(`seeded tasks ${from}–${to}`);
  }
  await dataSource.query(`ANALYZE "tasks"."tasks"`);
  await dataSource.query(`ANALYZE "tasks"."messages"`);
}

/** p50/p99 of the console's live-page calls through a running relay's admin API, when one is named. */
async function timeAdminApi(): Promise<void> {
  const url = process.env.CONSOLE_BENCH_URL;
  const token = process.env.CONSOLE_BENCH_ADMIN_TOKEN;
  if (!url || !token) return;
  const calls = [
    ['live page, first load: GET /admin/tasks?limit=50', '/admin/tasks?limit=50'],
    ['one filter: GET /admin/tasks?limit=50&state=pending', '/admin/tasks?limit=50&state=pending'],
    ['search: GET /admin/search?q=marker42', '/admin/search?q=marker42&limit=20'],
  ] as const;
  console.log(`\nthrough the edge at ${url}`);
  for (const [name, path] of calls) {
    const call = async (): Promise<void> => {
      const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
    };
    for (let warm = 0; warm < 5; warm++) await call();
    const times: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const started = process.hrtime.bigint();
      await call();
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    times.sort((a, b) => a - b);
    console.log(`${`${name} (${RUNS} runs)`.padEnd(60)} p50 ${percentile(times, 0.5).toFixed(2)} ms   p99 ${percentile(times, 0.99).toFixed(2)} ms`);
  }
}

async function main(): Promise<void> {
  await ensureDatabaseExists(DATABASE_URL);
  await migrateAllSchemas(DATABASE_URL);
  const dataSource = await new DataSource(tasksDataSourceOptions(DATABASE_URL)).initialize();
  try {
    await seed(dataSource);
    const listTasks = new ListAdminTasks(dataSource);
    const searchTasks = new SearchAdminTasks(new TaskSearch(dataSource));
    const reads: Reads = { list: (request) => listTasks.list(request), search: (request) => searchTasks.search(request) };
    const second = await reads.list({ limit: 50 });
    const scenarios: Scenario[] = [
      { name: 'first page (50, no filter)', run: (r) => r.list({ limit: 50 }) },
      { name: 'next page (cursor)', run: (r) => r.list({ limit: 50, cursor: second.next_cursor as string }) },
      { name: 'state=pending', run: (r) => r.list({ limit: 50, states: ['pending'] }) },
      { name: 'state=pending,accepted,input_required', run: (r) => r.list({ limit: 50, states: ['pending', 'accepted', 'input_required'] }) },
      { name: 'agent (either role)', run: (r) => r.list({ limit: 50, agent_id: 'agent-42', role: 'either' }) },
      { name: 'agent + state=failed', run: (r) => r.list({ limit: 50, agent_id: 'agent-42', role: 'either', states: ['failed'] }) },
      { name: 'intent=ask_question', run: (r) => r.list({ limit: 50, intents: ['ask_question'] }) },
      { name: 'search "marker42" (100 hits)', run: (r) => r.search({ query: 'marker42', limit: 20 }) },
      { name: 'search "marker42" + agent', run: (r) => r.search({ query: 'marker42', limit: 20, agent_id: 'agent-42', role: 'either' }) },
      { name: 'search "billing" (200 000 hits)', run: (r) => r.search({ query: 'billing', limit: 20 }), runs: 10 },
    ];
    const pool = pgPoolOf(dataSource);
    console.log(`\n${TASKS} tasks; each query warmed up 5 times, then timed\n`);
    for (const scenario of scenarios) {
      const runs = scenario.runs ?? RUNS;
      for (let warm = 0; warm < Math.min(5, runs); warm++) await scenario.run(reads);
      const times: number[] = [];
      for (let run = 0; run < runs; run++) {
        const started = process.hrtime.bigint();
        await scenario.run(reads);
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
      times.sort((a, b) => a - b);
      console.log(`${`${scenario.name} (${runs} runs)`.padEnd(48)} p50 ${percentile(times, 0.5).toFixed(2)} ms   p99 ${percentile(times, 0.99).toFixed(2)} ms`);
    }
    await timeAdminApi();
    // The plans of the first page and of one filter, as the service sends them.
    const captured: Array<{ text: string; values: unknown[] }> = [];
    const query = pool.query.bind(pool) as (text: string, values?: unknown[]) => Promise<unknown>;
    (pool as unknown as { query: typeof query }).query = (text: string, values?: unknown[]) => {
      captured.push({ text, values: values ?? [] });
      return query(text, values);
    };
    for (const [name, run] of [
      ['first page', () => reads.list({ limit: 50 })],
      ['state=pending', () => reads.list({ limit: 50, states: ['pending'] })],
    ] as const) {
      captured.length = 0;
      await run();
      const { rows } = (await query(`EXPLAIN (ANALYZE, BUFFERS) ${captured[0].text}`, captured[0].values)) as { rows: Array<{ 'QUERY PLAN': string }> };
      console.log(`\nEXPLAIN ANALYZE, ${name}:\n${rows.map((row) => row['QUERY PLAN']).join('\n')}`);
    }
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
