/**
 * The tasks service's retention on a big outbox, beside writes: seeds a throwaway database with
 * RETENTION_BENCH_EVENTS old published outbox events (300 000 by default) with generate_series, then
 * times single-row outbox inserts (what every create writes) for a few seconds alone, and again while
 * the retention (TasksRetentionService, default batch and pause) deletes the old events. Prints the
 * insert latencies of both, and how long the delete took. Drops the database after.
 *
 *   node --import ./test/support/process/register-ts.mjs scripts/bench/retention-deletes.ts
 *
 * RETENTION_BENCH_DATABASE_URL names the throwaway database (created, then dropped; never a relay's own).
 */
import pg from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '@app/config';
import { dropDatabase, ensureDatabaseExists } from '@app/database';
import { createMetricsRegistry, RetentionMetrics } from '@app/metrics';
import { generateNotifierSealingKeyPair } from '@app/secrets';
import { tasksDataSourceOptions } from '../../apps/tasks/src/database/data-source';
import { TasksRetentionService } from '../../apps/tasks/src/retention/retention.service';
import { TasksConfig } from '../../apps/tasks/src/tasks.config';
import { migrateAllSchemas } from '../migrate-all';

const DATABASE_URL = process.env.RETENTION_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/agentrelay_retention_bench';
const EVENTS = Number(process.env.RETENTION_BENCH_EVENTS ?? 300_000);
const BASELINE_MS = 5000;

const SEED_SQL = `
INSERT INTO "tasks"."outbox_events" ("id", "subject", "type", "task_id", "payload", "created_at", "published_at")
SELECT gen_random_uuid(), 'relay.events.task.created', 'created', 'OLD' || i,
  jsonb_build_object('sender', 'agent' || (i % 1000) || '@bench', 'recipient', 'agent' || ((i * 7 + 3) % 1000) || '@bench',
    'task', jsonb_build_object('latest_message', jsonb_build_object('body', repeat('lorem ipsum ', 40)))),
  now() - interval '30 days', now() - interval '30 days'
FROM generate_series(1, ${EVENTS}) i`;

const INSERT_SQL = `INSERT INTO "tasks"."outbox_events" ("id", "subject", "type", "task_id", "payload")
VALUES (gen_random_uuid(), 'relay.events.task.created', 'created', $1, jsonb_build_object('sender', 'new@bench', 'recipient', 'newer@bench'))`;

function percentile(sorted: number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))];
}

/** Inserts one row at a time until `until` resolves (or `ms` pass); answers the latencies, sorted. */
async function insertsUntil(client: pg.Client, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => (done = true));
  const times: number[] = [];
  while (!done) {
    const started = process.hrtime.bigint();
    await client.query(INSERT_SQL, [`NEW${times.length}`]);
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return times.sort((a, b) => a - b);
}

function summary(label: string, times: number[]): string {
  return `${label}: ${times.length} inserts, p50 ${percentile(times, 0.5).toFixed(2)} ms, p99 ${percentile(times, 0.99).toFixed(2)} ms, max ${times[times.length - 1].toFixed(2)} ms, none failed`;
}

async function main(): Promise<void> {
  await dropDatabase(DATABASE_URL);
  await ensureDatabaseExists(DATABASE_URL);
  let dataSource: DataSource | undefined;
  const client = new pg.Client({ connectionString: DATABASE_URL });
  try {
    await migrateAllSchemas(DATABASE_URL);
    await client.connect();
    await client.query(SEED_SQL);
    await client.query('VACUUM ANALYZE "tasks"."outbox_events"');
    console.log(`seeded ${EVENTS} old published outbox events`);

    const config = loadConfig(TasksConfig, {
      DATABASE_URL,
      RELAY_SECRET_KEYS: 'bench:YmVuY2gta2V5LWJlbmNoLWtleS1iZW5jaC1rZXktMDE=',
      RELAY_NOTIFIER_PUBLIC_KEY: generateNotifierSealingKeyPair('bench').publicKey,
    });
    dataSource = await new DataSource(tasksDataSourceOptions(DATABASE_URL, config.RELAY_DB_STATEMENT_TIMEOUT_MS)).initialize();
    const retention = new TasksRetentionService(dataSource, config, new RetentionMetrics(createMetricsRegistry()));

    console.log(summary(`alone, ${BASELINE_MS} ms`, await insertsUntil(client, new Promise((resolve) => setTimeout(resolve, BASELINE_MS)))));
    const started = Date.now();
    let deleted: Record<string, number> | undefined;
    const run = retention.runOnce().then((counts) => (deleted = counts));
    const during = await insertsUntil(client, run);
    const ms = Date.now() - started;
    console.log(summary(`while the retention ran`, during));
    const rows = deleted?.['tasks.outbox_events'] ?? 0;
    console.log(
      `retention: ${rows} rows in ${ms} ms (${Math.round((rows / ms) * 1000)} rows/s) in batches of ${config.RELAY_RETENTION_BATCH_SIZE} with ${config.RELAY_RETENTION_PAUSE_MS} ms between`,
    );
  } finally {
    await client.end().catch(() => undefined);
    await dataSource?.destroy();
    await dropDatabase(DATABASE_URL);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
