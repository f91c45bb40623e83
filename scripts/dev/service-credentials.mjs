// Each service's own NATS credential for `npm start --nats-credentials DIR`: the files
// `npm run nats:credentials -- --dir DIR` writes (DIR/credentials/<service>.nk, or <service>.creds with
// --operator), DIR itself being the credentials folder too.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Settings that name a NATS credential: one per service comes from the folder instead. */
const CREDENTIAL_SETTINGS = ['NATS_CREDS_FILE', 'NATS_NKEY_SEED_FILE', 'NATS_USER', 'NATS_PASSWORD_FILE', 'NATS_TOKEN_FILE'];

/**
 * `{ dir, <service>: { NATS_NKEY_SEED_FILE | NATS_CREDS_FILE } }` for each service, from `dir`;
 * throws an Error naming what is missing or in the way.
 */
export function serviceCredentials(dir, services, env) {
  const set = CREDENTIAL_SETTINGS.filter((key) => env[key]);
  if (set.length > 0) {
    throw new Error(`--nats-credentials gives each service its own credential: unset ${set.join(', ')}, which would give all of them one`);
  }
  const base = resolve(dir);
  if (!existsSync(base)) throw new Error(`--nats-credentials ${dir}: no such folder (make it with npm run nats:credentials -- --dir ${dir})`);
  const folders = [join(base, 'credentials'), base];
  const found = { dir: base };
  const missing = [];
  for (const service of services) {
    const seed = folders.map((folder) => join(folder, `${service}.nk`)).find((path) => existsSync(path));
    const creds = folders.map((folder) => join(folder, `${service}.creds`)).find((path) => existsSync(path));
    if (seed) found[service] = { NATS_NKEY_SEED_FILE: seed };
    else if (creds) found[service] = { NATS_CREDS_FILE: creds };
    else missing.push(service);
  }
  if (missing.length > 0) {
    throw new Error(
      `--nats-credentials ${dir}: no credential for ${missing.join(', ')} (looked for <service>.nk and <service>.creds in ${folders.join(' and ')}); ` +
        `make them with npm run nats:credentials -- --dir ${dir}`,
    );
  }
  return found;
}
