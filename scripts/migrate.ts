import 'reflect-metadata';
import { DatabaseServiceConfig, loadConfig } from '@app/config';
import { ensureDatabaseExists } from '@app/database';
import { migrateAllSchemas } from './migrate-all';

async function main(): Promise<void> {
  const { DATABASE_URL } = loadConfig(DatabaseServiceConfig, process.env);
  if (await ensureDatabaseExists(DATABASE_URL)) console.log(`created database ${new URL(DATABASE_URL).pathname.slice(1)}`);
  const applied = await migrateAllSchemas(DATABASE_URL);
  for (const [schema, names] of Object.entries(applied)) {
    console.log(`${schema}: ${names.length ? `applied ${names.join(', ')}` : 'up to date'}`);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
