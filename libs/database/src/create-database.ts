import pg from 'pg';

/** Creates the database named in `url` when it does not exist yet (connecting to `postgres`). */
export async function ensureDatabaseExists(url: string): Promise<boolean> {
  const target = new URL(url);
  const databaseName = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]+$/.test(databaseName)) throw new Error(`Unsupported database name: ${databaseName}`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [databaseName]);
    if (found.rowCount) return false;
    try {
      await client.query(`CREATE DATABASE "${databaseName}"`);
    } catch (error) {
      if ((error as { code?: string }).code !== '42P04') throw error;
      return false;
    }
    return true;
  } finally {
    await client.end();
  }
}

export async function dropDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const databaseName = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]+$/.test(databaseName)) throw new Error(`Unsupported database name: ${databaseName}`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
