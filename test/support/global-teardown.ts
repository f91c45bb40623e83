import { dropDatabase } from '../../libs/database/src/create-database';
import { workerDatabaseUrl } from './test-env';

export default async function globalTeardown(): Promise<void> {
  const url = process.env.RELAY_TEST_DATABASE_URL;
  if (!url || process.env.KEEP_TEST_DATABASE === 'true') return;
  const workers = Number(process.env.RELAY_TEST_DATABASE_WORKERS ?? 1);
  for (let worker = 1; worker <= workers; worker++) await dropDatabase(workerDatabaseUrl(url, worker));
}
