import { randomBytes } from 'node:crypto';

/** The database of one Jest worker of the run whose base database URL is `base`. */
export function workerDatabaseUrl(base: string, worker: number): string {
  const url = new URL(base);
  url.pathname = `${url.pathname}_w${worker}`;
  return url.toString();
}

/** The database this test file's worker uses (global setup created one per worker). */
export function testDatabaseUrl(): string {
  const url = process.env.RELAY_TEST_DATABASE_URL;
  if (!url) throw new Error('RELAY_TEST_DATABASE_URL is not set: run the e2e tests through jest (global setup creates it)');
  return workerDatabaseUrl(url, Number(process.env.JEST_WORKER_ID ?? 1));
}

export function testNatsUrl(): string {
  return process.env.NATS_URL || 'nats://127.0.0.1:4222';
}

/** A NATS subject prefix no other test or run uses. */
export function uniqueSubjectPrefix(): string {
  return `test_${process.pid}_${randomBytes(4).toString('hex')}`;
}
