import { randomBytes } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { ensureDatabaseExists } from '../../libs/database/src/create-database';
import { dropStaleDatabases } from './stale-databases';
import { ensureConsoleBuild } from './console-build';
import { workerDatabaseUrl } from './test-env';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Deletes JetStream streams of test prefixes (`test_<pid>_<hex>`) whose process is gone. */
async function deleteOrphanedTestStreams(natsUrl: string): Promise<void> {
  const connection = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(connection);
    const orphaned: string[] = [];
    for await (const stream of jsm.streams.list()) {
      const pid = /_test_(\d+)_[0-9a-f]+$/.exec(stream.config.name)?.[1];
      if (pid && !isAlive(Number(pid))) orphaned.push(stream.config.name);
    }
    for (const name of orphaned) await jsm.streams.delete(name).catch(() => undefined);
  } finally {
    await connection.close();
  }
}

/** How many test files run at once (each worker runs its files one after another). */
function workerCount(globalConfig: { maxWorkers?: number } | undefined): number {
  return Math.max(1, globalConfig?.maxWorkers ?? 1);
}

/**
 * Creates this run's own databases, one per Jest worker (the services apply their migrations when
 * the harness starts them, under an advisory lock), after clearing what crashed runs left behind.
 * Files of one worker run one after another and share its database, as a whole run in band would;
 * files of two workers never share one (each relay's outbox relay publishes every row of its table).
 * The console's browser tests need its static build: made here when missing or older than its sources.
 */
export default async function globalSetup(globalConfig?: { maxWorkers?: number }): Promise<void> {
  ensureConsoleBuild();
  const base = new URL(process.env.TEST_DATABASE_BASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
  await dropStaleDatabases(base, 'relay_test');
  await deleteOrphanedTestStreams(process.env.NATS_URL || 'nats://127.0.0.1:4222');
  const url = new URL(base.toString());
  url.pathname = `/relay_test_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const workers = workerCount(globalConfig);
  for (let worker = 1; worker <= workers; worker++) await ensureDatabaseExists(workerDatabaseUrl(url.toString(), worker));
  process.env.RELAY_TEST_DATABASE_URL = url.toString();
  process.env.RELAY_TEST_DATABASE_WORKERS = String(workers);
}
