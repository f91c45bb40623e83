import { randomBytes } from 'node:crypto';
import { ensureDatabaseExists } from '../../../libs/database/src/create-database';
import { dropStaleDatabases } from '../../support/stale-databases';

/**
 * Creates this run's own medium-tier database (its name apart from the e2e tier's, so runs of
 * both at once never meet); each test file applies the tasks migrations to it (idempotent, under
 * the migrations' advisory lock).
 */
export default async function globalSetup(): Promise<void> {
  const base = new URL(process.env.TEST_DATABASE_BASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
  await dropStaleDatabases(base, 'relay_medium');
  const url = new URL(base.toString());
  url.pathname = `/relay_medium_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  await ensureDatabaseExists(url.toString());
  process.env.RELAY_MEDIUM_DATABASE_URL = url.toString();
}
