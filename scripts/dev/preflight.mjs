// Checks, before anything is built or started, that the relay's two dependencies answer: Postgres
// at DATABASE_URL and NATS with JetStream at NATS_URL (any of its servers). Returns one message naming each that does
// not and how to get it, or null when both answer.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { connect, credsAuthenticator, nkeyAuthenticator } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/relay';
const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';
const TIMEOUT_MS = 3000;

function redacted(url) {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

async function checkPostgres(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: TIMEOUT_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return null;
  } catch (error) {
    // The server answered: a missing database is created by the migration step.
    if (error.code === '3D000') return null;
    return error.code === '28P01' || error.code === '28000'
      ? `PostgreSQL at ${redacted(url)} refused the login (${error.message}); fix DATABASE_URL.`
      : `PostgreSQL is not reachable at ${redacted(url)} (${error.message || error.code}).`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

// NATS_URL may list several servers, comma-separated; the check passes when any of them answers.
// (The services validate the list fully, in libs/config; this only needs the addresses.) The
// messages show the servers without credentials, which nats.js takes as options, not in the URL.
function natsServers(value) {
  const servers = [];
  const auth = {};
  for (const entry of value.split(',').map((part) => part.trim())) {
    if (!entry) continue;
    let url;
    try {
      url = new URL(entry.includes('://') ? entry : `nats://${entry}`);
    } catch {
      servers.push(entry.slice(entry.lastIndexOf('@') + 1));
      continue;
    }
    if (url.password) Object.assign(auth, { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) });
    else if (url.username) auth.token = decodeURIComponent(url.username);
    servers.push(`${url.protocol}//${url.host}`);
  }
  return { servers, auth, printable: servers.join(', ') };
}

/** The nkey seed or .creds file the services connect with (NATS_NKEY_SEED_FILE / NATS_CREDS_FILE), as nats.js options. */
function fileCredential(env) {
  if (env.NATS_NKEY_SEED_FILE) return { authenticator: nkeyAuthenticator(Buffer.from(readFileSync(env.NATS_NKEY_SEED_FILE, 'utf8').trim())) };
  if (env.NATS_CREDS_FILE) return { authenticator: credsAuthenticator(new Uint8Array(readFileSync(env.NATS_CREDS_FILE))) };
  return {};
}

async function checkNats(value, env) {
  const { servers, auth, printable: url } = natsServers(value);
  let connection;
  try {
    // maxReconnectAttempts -1: nats.js tries each server once at the first connect (with 0 it drops
    // the next server along with a refused one).
    connection = await connect({
      servers,
      ...auth,
      ...fileCredential(env),
      timeout: TIMEOUT_MS,
      maxReconnectAttempts: -1,
      reconnect: false,
      name: 'agentrelay-start-check',
    });
  } catch (error) {
    if (/authori[sz]ation|authentication/i.test(error.message)) {
      return `NATS at ${url} refused the credential (${error.message}); give npm start the folder of its users: --nats-credentials DIR (docs/operations.md#running-locally).`;
    }
    return `NATS is not reachable at ${url} (${error.message}).`;
  }
  // A service's credential may only use its own reply subjects: the service checks JetStream and every grant itself as it starts.
  if (env.NATS_NKEY_SEED_FILE || env.NATS_CREDS_FILE) {
    await connection.close().catch(() => undefined);
    return null;
  }
  try {
    const jsm = await jetstreamManager(connection, { timeout: TIMEOUT_MS });
    await jsm.getAccountInfo();
    return null;
  } catch (error) {
    return `NATS at ${url} answers but has no JetStream (${error.message}); start nats-server with -js.`;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

const HOW_TO_GET_THEM = [
  'Get them with the Debian packages (the defaults expect both on 127.0.0.1):',
  '  sudo apt-get install postgresql nats-server   # a "postgres" role with trust auth on 127.0.0.1:5432',
  '  nats-server -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server',
  'or with Docker, from this repository:',
  '  docker compose up -d nats postgres',
  '  export DATABASE_URL=postgres://relay:relay@127.0.0.1:5432/relay',
  'or point DATABASE_URL / NATS_URL at the ones you have.',
].join('\n');

export async function preflight(env) {
  const problems = (await Promise.all([checkPostgres(env.DATABASE_URL || DEFAULT_DATABASE_URL), checkNats(env.NATS_URL || DEFAULT_NATS_URL, env)])).filter(
    Boolean,
  );
  if (problems.length === 0) return null;
  return `Cannot start the relay:\n${problems.map((problem) => `  - ${problem}`).join('\n')}\n${HOW_TO_GET_THEM}`;
}
