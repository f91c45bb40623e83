import pg from 'pg';
import { dropDatabase } from '../../libs/database/src/create-database';

const STALE_DATABASE_AGE_MS = 6 * 60 * 60 * 1000;

/** Drops the databases named `<prefix>_<base36 time>_<hex>` that a crashed run left behind hours ago. */
export async function dropStaleDatabases(base: URL, prefix: string): Promise<void> {
  const client = new pg.Client({ connectionString: base.toString() });
  await client.connect();
  try {
    const pattern = `${prefix.replace(/_/g, '\\_')}\\_%`;
    const { rows } = await client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [pattern]);
    for (const { datname } of rows) {
      const createdAt = parseInt(datname.slice(prefix.length + 1).split('_')[0] ?? '', 36);
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
