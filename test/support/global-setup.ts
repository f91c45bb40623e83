import { randomBytes } from 'node:crypto';
import { ensureDatabaseExists } from '../../libs/database/src/create-database';

/**
 * Creates this run's own database; the services apply their migrations to it when the harness
 * starts them (under an advisory lock, so concurrent starts migrate once).
 */
export default async function globalSetup(): Promise<void> {
  const base = new URL(process.env.TEST_DATABASE_BASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
  base.pathname = `/relay_test_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const url = base.toString();
  await ensureDatabaseExists(url);
  process.env.RELAY_TEST_DATABASE_URL = url;
}
