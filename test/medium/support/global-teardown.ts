import { dropDatabase } from '../../../libs/database/src/create-database';

export default async function globalTeardown(): Promise<void> {
  const url = process.env.RELAY_MEDIUM_DATABASE_URL;
  if (!url || process.env.KEEP_TEST_DATABASE === 'true') return;
  await dropDatabase(url);
}
