import 'reflect-metadata';
import { DatabaseServiceConfig, loadConfig } from '@app/config';
import { IsSecretKeyList } from '@app/secrets';
import { resealAllSecrets } from './reseal-all';

class ResealConfig extends DatabaseServiceConfig {
  @IsSecretKeyList()
  RELAY_SECRET_KEYS: string;
}

/**
 * Key rotation, step 2: with the new key first in RELAY_SECRET_KEYS (and the old one still
 * listed), seals every stored secret with the new key. Exits 1 when a value could not be opened,
 * i.e. when a key it needs is missing: then do not retire any key yet.
 */
async function main(): Promise<void> {
  const config = loadConfig(ResealConfig, process.env);
  const results = await resealAllSecrets(config.DATABASE_URL, config.RELAY_SECRET_KEYS);
  let unreadable = 0;
  for (const result of results) {
    console.log(
      `${result.table}.${result.column}: ${result.resealed} re-sealed${result.unreadable ? `, ${result.unreadable} sealed with a key not listed` : ''}`,
    );
    unreadable += result.unreadable;
  }
  if (unreadable > 0) {
    console.error(`${unreadable} stored secrets are sealed with a key RELAY_SECRET_KEYS does not list; keep (or add back) that key.`);
    process.exit(1);
  }
  console.log('Every stored secret is sealed with the first key; the other keys can be retired.');
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
