import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { dropDatabase, ensureDatabaseExists } from '../../../libs/database/src/create-database';

const STALE_DATABASE_AGE_MS = 6 * 60 * 60 * 1000;

/** Drops medium-tier databases (`relay_medium_<base36 time>_<hex>`) that a crashed run left behind hours ago. */
async function dropStaleMediumDatabases(base: URL): Promise<void> {
  const client = new pg.Client({ connectionString: base.toString() });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE 'relay\\_medium\\_%'`);
    for (const { datname } of rows) {
      const createdAt = parseInt(datname.split('_')[2] ?? '', 36);
      if (Number.isFinite(createdAt) && Date.now() - createdAt > STALE_DATABASE_AGE_MS) {
        const stale = new URL(base.toString());
        stale.pathname = `/${datname}`;
        await dropDatabase(stale.toString());
      }
    }
  } finally {
    await client.end();
  }
}

/**
 * Creates this run's own medium-tier database (its name apart from the e2e tier's, so runs of
 * both at once never meet); each test file applies the tasks migrations to it (idempotent, under
 * the migrations' advisory lock).
 */
export default async function globalSetup(): Promise<void> {
  const base = new URL(process.env.TEST_DATABASE_BASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
  await dropStaleMediumDatabases(base);
  const url = new URL(base.toString());
  url.pathname = `/relay_medium_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  await ensureDatabaseExists(url.toString());
  process.env.RELAY_MEDIUM_DATABASE_URL = url.toString();
}
