import pg from 'pg';

function databaseNameOf(url: string): string {
  const databaseName = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]+$/.test(databaseName)) throw new Error(`Unsupported database name: ${databaseName}`);
  return databaseName;
}

/** Runs `work` on a connection to the server's `postgres` database (for CREATE / DROP DATABASE). */
async function withMaintenanceConnection<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const client = new pg.Client({ connectionString: maintenance.toString() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates the database named in `url` when it does not exist yet; true when it was created. */
export async function ensureDatabaseExists(url: string): Promise<boolean> {
  const databaseName = databaseNameOf(url);
  return withMaintenanceConnection(url, async (client) => {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [databaseName]);
    if (found.rowCount) return false;
    try {
      await client.query(`CREATE DATABASE "${databaseName}"`);
      return true;
    } catch (error) {
      if ((error as { code?: string }).code === '42P04') return false;
      throw error;
    }
  });
}

export async function dropDatabase(url: string): Promise<void> {
  const databaseName = databaseNameOf(url);
  await withMaintenanceConnection(url, (client) => client.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`));
}
