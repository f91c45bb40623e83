/**
 * The live inbox's replay (`relay.tasks.v1.inbox_events`, tasks/watch with Last-Event-ID) on a big
 * outbox: seeds a throwaway database with REPLAY_BENCH_EVENTS outbox rows (300 000 by default, 1000
 * agents) with generate_series, then prints the plan (EXPLAIN ANALYZE of the prepared statement, as
 * the tasks service runs it, after enough runs for Postgres to settle on its plan) and the timings of
 * the replay before this change (one OR over sender and recipient) and now (each side from its own
 * index, merged), for an agent resuming from far back and from near the end. Drops the database after.
 *
 *   node --import ./test/support/process/register-ts.mjs scripts/bench/inbox-replay.ts
 *
 * REPLAY_BENCH_DATABASE_URL names the throwaway database (created, then dropped; never a relay's own).
 */
import pg from 'pg';
import { dropDatabase, ensureDatabaseExists } from '@app/database';
import { INBOX_EVENTS_AFTER_SQL } from '../../apps/tasks/src/tasks/store/task-event-replay';
import { migrateAllSchemas } from '../migrate-all';

const DATABASE_URL = process.env.REPLAY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/agentrelay_replay_bench';
const EVENTS = Number(process.env.REPLAY_BENCH_EVENTS ?? 300_000);
const RUNS = Number(process.env.REPLAY_BENCH_RUNS ?? 50);
const AGENTS = 1000;
const TASK_EVENTS_ONLY = `"type" NOT IN ('push_config_set', 'push_config_deleted')`;

/** The replay query before this change, as the tasks service sent it. */
const BEFORE_SQL = `SELECT w."position"::text AS "position", w."payload", w."running" <= $4 AS "fits", w."candidates"::int AS "candidates" FROM (
    SELECT e."position", e."payload",
      sum(octet_length(e."payload"::text) + 64) OVER (ORDER BY e."position") AS "running",
      row_number() OVER (ORDER BY e."position") AS "rank",
      count(*) OVER () AS "candidates"
    FROM (SELECT "position", "payload" FROM "tasks"."outbox_events"
   WHERE "position" > $1::bigint AND ${TASK_EVENTS_ONLY} AND ("payload"->>'sender' = $2 OR "payload"->>'recipient' = $2) ORDER BY "position" LIMIT $3) e
  ) w WHERE w."rank" = 1 OR w."running" <= $4 ORDER BY w."position"`;

/** Three events per task (created, accepted, completed), each task between two of the agents; payloads of a realistic size. */
const SEED_SQL = `
INSERT INTO "tasks"."outbox_events" ("id", "subject", "type", "task_id", "payload", "created_at", "published_at")
SELECT gen_random_uuid(), 'relay.events.task.' || e.type, e.type, t.id,
  jsonb_build_object('schema_version', 1, 'type', e.type, 'task_id', t.id, 'sender', t.sender, 'recipient', t.recipient, 'state', e.type,
    'task', jsonb_build_object('summary', 'Please review the refactor of ticket ' || (i / 3), 'latest_message', jsonb_build_object('body', repeat('lorem ipsum ', 20)))),
  now() - make_interval(secs => ${EVENTS} - i), now() - make_interval(secs => ${EVENTS} - i)
FROM generate_series(1, ${EVENTS}) i
CROSS JOIN LATERAL (SELECT (ARRAY['created', 'accepted', 'completed'])[i % 3 + 1] AS type) e
CROSS JOIN LATERAL (SELECT '01' || upper(lpad(to_hex(i / 3), 24, '0')) AS id,
  'agent' || ((i / 3) % ${AGENTS}) || '@bench' AS sender, 'agent' || (((i / 3) * 7 + 3) % ${AGENTS}) || '@bench' AS recipient) t`;

interface Case {
  name: string;
  handle: string;
  after: string;
}

function percentile(sorted: number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))];
}

async function measure(client: pg.Client, label: string, sql: string, cases: Case[]): Promise<void> {
  const statement = label.replace(/\W+/g, '_');
  await client.query(`PREPARE ${statement} (bigint, text, bigint, bigint) AS ${sql}`);
  for (const { name, handle, after } of cases) {
    const values = `${after}, '${handle}', 201, 4194304`;
    const times: number[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      const started = process.hrtime.bigint();
      await client.query(`EXECUTE ${statement}(${values})`);
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    times.sort((a, b) => a - b);
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) EXECUTE ${statement}(${values})`);
    console.log(`\n## ${label}, ${name}: p50 ${percentile(times, 0.5).toFixed(2)} ms, p99 ${percentile(times, 0.99).toFixed(2)} ms over ${RUNS} runs\n`);
    console.log(rows.map((row) => row['QUERY PLAN']).join('\n'));
  }
  await client.query(`DEALLOCATE ${statement}`);
}

async function main(): Promise<void> {
  await dropDatabase(DATABASE_URL);
  await ensureDatabaseExists(DATABASE_URL);
  try {
    await migrateAllSchemas(DATABASE_URL);
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      const started = Date.now();
      await client.query(SEED_SQL);
      await client.query('VACUUM ANALYZE "tasks"."outbox_events"');
      console.log(`seeded ${EVENTS} outbox events for ${AGENTS} agents in ${Date.now() - started} ms`);
      const cases: Case[] = [
        { name: 'a busy agent resuming from far back', handle: 'agent5@bench', after: '1000' },
        { name: 'a busy agent resuming near the end', handle: 'agent5@bench', after: String(EVENTS - 3000) },
        { name: 'a quiet agent (no events since) resuming from far back', handle: 'quiet@bench', after: '1000' },
      ];
      await measure(client, 'before (OR)', BEFORE_SQL, cases);
      await measure(client, 'after (per index, merged)', INBOX_EVENTS_AFTER_SQL, cases);
    } finally {
      await client.end();
    }
  } finally {
    await dropDatabase(DATABASE_URL);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
