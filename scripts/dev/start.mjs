// `npm start`: installs, checks that Postgres and NATS (with JetStream) answer, builds (into a fresh
// directory that dist is then switched to, so agents' running hooks and MCP servers keep a whole tree), prepares
// the database and runs the four services as one supervised group. A service that crashes is restarted (with backoff); one that keeps crashing
// stops the group with its error shown. Ctrl-C (or SIGTERM) stops everything gracefully.
import { execSync, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';

const SERVICES = ['directory', 'tasks', 'notifier', 'edge'];
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 60_000;

function run(command) {
  execSync(command, { stdio: 'inherit' });
}

run('node scripts/dev/ensure-deps.mjs');
// Loaded after the install: it needs the pg and NATS clients.
const { preflight } = await import('./preflight.mjs');
const missing = await preflight(process.env);
if (missing) {
  console.error(missing);
  process.exit(1);
}
console.log('Building…');
run('npm run --silent build');
console.log('Preparing the database…');
run('node dist/scripts/migrate.js');

const env = { ...process.env, RELAY_MIGRATE_ON_START: process.env.RELAY_MIGRATE_ON_START ?? 'false' };
if (!env.RELAY_ADMIN_TOKEN) {
  env.RELAY_ADMIN_TOKEN = `dev_${randomBytes(24).toString('base64url')}`;
  console.log(`\nRELAY_ADMIN_TOKEN was not set; generated one for this run (shown once):\n  ${env.RELAY_ADMIN_TOKEN}\n`);
}

// Stored secrets are sealed with RELAY_SECRET_KEYS; a local run keeps its generated key in
// .relay/secret-keys (git-ignored, owner-only) so the data stays readable from one run to the next.
if (!env.RELAY_SECRET_KEYS) {
  const keyFile = '.relay/secret-keys';
  if (!existsSync(keyFile)) {
    mkdirSync('.relay', { recursive: true });
    writeFileSync(keyFile, `local:${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    console.log(`RELAY_SECRET_KEYS was not set; generated a key into ${keyFile} (keep it: stored secrets need it).`);
  }
  chmodSync(keyFile, 0o600);
  env.RELAY_SECRET_KEYS = readFileSync(keyFile, 'utf8').trim();
}

// What the services send the notifier over NATS is sealed to its X25519 key; a local run keeps the
// pair in .relay/notifier-sealing-key (the notifier's private key, then the public one the others seal to).
if (!env.RELAY_NOTIFIER_SEALING_KEYS || !env.RELAY_NOTIFIER_PUBLIC_KEY) {
  const keyFile = '.relay/notifier-sealing-key';
  if (!existsSync(keyFile)) {
    mkdirSync('.relay', { recursive: true });
    const { privateKey, publicKey } = generateKeyPairSync('x25519');
    const pair = `local:${privateKey.export({ format: 'jwk' }).d}\nlocal:${publicKey.export({ format: 'jwk' }).x}\n`;
    writeFileSync(keyFile, pair, { mode: 0o600 });
  }
  chmodSync(keyFile, 0o600);
  const [sealingKeys, publicKey] = readFileSync(keyFile, 'utf8').trim().split('\n');
  env.RELAY_NOTIFIER_SEALING_KEYS = sealingKeys;
  env.RELAY_NOTIFIER_PUBLIC_KEY = publicKey;
}

// The agents' stream ids are sealed with RELAY_STREAM_ID_KEY; a kept key lets a stream resume after a restart.
if (!env.RELAY_STREAM_ID_KEY) {
  const keyFile = '.relay/stream-id-key';
  if (!existsSync(keyFile)) {
    mkdirSync('.relay', { recursive: true });
    writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  }
  chmodSync(keyFile, 0o600);
  env.RELAY_STREAM_ID_KEY = readFileSync(keyFile, 'utf8').trim();
}

const children = new Map();
const crashes = new Map();
let stopping = false;

function start(service) {
  const child = spawn(process.execPath, ['--enable-source-maps', `dist/apps/${service}/src/main.js`], { env, stdio: 'inherit' });
  children.set(service, child);
  child.on('exit', (code, signal) => {
    children.delete(service);
    if (stopping) {
      if (children.size === 0) process.exit(0);
      return;
    }
    const now = Date.now();
    const recent = (crashes.get(service) ?? []).filter((at) => now - at < RESTART_WINDOW_MS);
    recent.push(now);
    crashes.set(service, recent);
    if (recent.length > MAX_RESTARTS) {
      console.error(`[supervisor] ${service} exited ${recent.length} times within a minute (last: code ${code}, signal ${signal}); stopping the relay.`);
      stop(1);
      return;
    }
    const delay = Math.min(200 * 2 ** (recent.length - 1), 5000);
    console.error(`[supervisor] ${service} exited (code ${code}, signal ${signal}); restarting in ${delay} ms`);
    setTimeout(() => !stopping && start(service), delay);
  });
}

function stop(exitCode = 0) {
  if (stopping) return;
  stopping = true;
  process.exitCode = exitCode;
  for (const child of children.values()) child.kill('SIGTERM');
  setTimeout(() => {
    for (const child of children.values()) child.kill('SIGKILL');
    process.exit(exitCode);
  }, 10_000).unref();
  if (children.size === 0) process.exit(exitCode);
}

process.on('exit', () => {
  for (const child of children.values()) child.kill('SIGTERM');
});
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

for (const service of SERVICES) start(service);
const port = env.EDGE_PORT || '8080';
const host = env.EDGE_HOST || '127.0.0.1';
console.log(`[supervisor] started ${SERVICES.join(', ')}; the edge listens on http://${host}:${port} (Ctrl-C stops all)`);
