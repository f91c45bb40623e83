import { randomBytes } from 'node:crypto';

/** The database this test run created in global setup. */
export function testDatabaseUrl(): string {
  const url = process.env.RELAY_TEST_DATABASE_URL;
  if (!url) throw new Error('RELAY_TEST_DATABASE_URL is not set: run the e2e tests through jest (global setup creates it)');
  return url;
}

export function testNatsUrl(): string {
  return process.env.NATS_URL || 'nats://127.0.0.1:4222';
}

/** A NATS subject prefix no other test or run uses. */
export function uniqueSubjectPrefix(): string {
  return `test_${process.pid}_${randomBytes(4).toString('hex')}`;
}
