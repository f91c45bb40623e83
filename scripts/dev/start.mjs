// `npm start`: installs (with progress), checks that Postgres and NATS (with JetStream) answer, builds (into a
// fresh directory that dist is then switched to, so agents' running hooks and MCP servers keep a whole tree),
// prepares the database and runs the four services as one supervised group. A service that crashes is restarted
// (with backoff); one that keeps crashing stops the group with its error shown. Once the edge answers, it prints
// the URL and the admin token, last. SIGINT or SIGTERM to this process (Ctrl-C, or `kill` of the pid `npm start`
// runs as) stops every step and service, and says so. Logs are readable on a terminal, JSON otherwise
// (LOG_FORMAT=json or pretty to choose). `--nats-credentials DIR` runs each service with its own NATS credential.
import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { dependenciesStale, installDependencies } from './install.mjs';
import { serviceCredentials } from './service-credentials.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SERVICES = ['directory', 'tasks', 'notifier', 'edge'];
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 60_000;
/** How long services get to stop after SIGTERM before they are killed. */
const STOP_GRACE_MS = 8000;
/** A terminal's Ctrl-C reaches this process twice (from the terminal and from npm): a repeat this soon is the same request. */
const REPEAT_SIGNAL_MS = 2000;
const READY_POLL_MS = 250;
/** Services write their log lines in chunks, at least once a second: lines written before the edge was ready arrive within this. */
const LOG_SETTLE_MS = 1500;
const LOG_SETTLE_MAX_MS = 6000;

const USAGE = `npm start [-- --nats-credentials DIR]

  --nats-credentials DIR   run each service with its own NATS credential: DIR/credentials/<service>.nk
                           (or .creds), as npm run nats:credentials -- --dir DIR writes them
                           (also RELAY_NATS_CREDENTIALS_DIR)
Environment: LOG_FORMAT=json|pretty (default: pretty on a terminal, JSON otherwise), and every setting
of docs/operations.md#configuration.`;

function say(line) {
  process.stdout.write(`[supervisor] ${line}\n`);
}

function fail(message, code = 1) {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

let options;
try {
  options = parseArgs({ options: { 'nats-credentials': { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true }).values;
} catch (error) {
  fail(`${error.message}\n\n${USAGE}`, 2);
}
if (options.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const logFormat = process.env.LOG_FORMAT ?? '';
if (!['', 'json', 'pretty'].includes(logFormat)) fail(`LOG_FORMAT must be json or pretty (unset: pretty on a terminal), not ${JSON.stringify(logFormat)}`, 2);
const pretty = logFormat === 'pretty' || (logFormat === '' && Boolean(process.stdout.isTTY));

// --- stopping ---------------------------------------------------------------------------------
const children = new Map();
const crashes = new Map();
/** The install, build or migration running now (its own process group, stopped as a whole). */
let step = null;
let stopping = false;
let firstSignalAt = 0;

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

function stop(exitCode, reason) {
  if (stopping) return;
  stopping = true;
  process.exitCode = exitCode;
  if (step) {
    say(`${reason}: stopping (the ${step.name} step is ended)`);
    killGroup(step.child, 'SIGTERM');
    return;
  }
  if (children.size === 0) {
    if (reason) say(`${reason}: stopped`);
    process.exit(exitCode);
  }
  const names = [...children.keys()];
  say(`${reason}: stopping ${names.join(', ')}…`);
  for (const child of children.values()) child.kill('SIGTERM');
  setTimeout(() => {
    const left = [...children.keys()];
    say(`${left.join(', ')} did not stop within ${STOP_GRACE_MS / 1000} s: killed`);
    for (const child of children.values()) child.kill('SIGKILL');
    process.exit(exitCode);
  }, STOP_GRACE_MS).unref();
}

function onSignal(signal) {
  const now = Date.now();
  if (!stopping) {
    firstSignalAt = now;
    stop(0, `${signal} received`);
    return;
  }
  if (now - firstSignalAt < REPEAT_SIGNAL_MS) return;
  say(`${signal} again: killing what is left`);
  if (step) killGroup(step.child, 'SIGKILL');
  for (const child of children.values()) child.kill('SIGKILL');
  process.exit(process.exitCode ?? 0);
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => onSignal(signal));
process.on('exit', () => {
  if (step) killGroup(step.child, 'SIGKILL');
  for (const child of children.values()) child.kill('SIGTERM');
});

/** Runs one preparation step (its own process group, so that a stop ends whatever it started). */
async function runStep(name, command, args) {
  const child = spawn(command, args, { cwd: ROOT, stdio: 'inherit', detached: true });
  step = { name, child };
  const [code, signal] = await new Promise((resolve) => {
    child.once('error', () => resolve([1, null]));
    child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
  });
  step = null;
  if (stopping) {
    say('stopped');
    process.exit(process.exitCode ?? 0);
  }
  if (code !== 0) fail(`${name} failed (${signal ? `signal ${signal}` : `exit code ${code}`})`);
}

// --- preparing --------------------------------------------------------------------------------
const credentialsDir = options['nats-credentials'] ?? process.env.RELAY_NATS_CREDENTIALS_DIR ?? '';
let credentials = null;
if (credentialsDir) {
  try {
    credentials = serviceCredentials(credentialsDir, SERVICES, process.env);
  } catch (error) {
    fail(error.message, 2);
  }
}

if (dependenciesStale(ROOT)) {
  await installDependencies(ROOT, { onChild: (child) => (step = { name: 'install', child }) }).catch((error) => {
    const stopped = stopping;
    step = null;
    if (stopped) process.exit(process.exitCode ?? 0);
    fail(error.message);
  });
  step = null;
  if (stopping) process.exit(process.exitCode ?? 0);
}

// Loaded after the install: it needs the pg and NATS clients.
const { preflight } = await import('./preflight.mjs');
const missing = await preflight(credentials ? { ...process.env, ...credentials.edge } : process.env);
if (missing) fail(missing);
if (stopping) process.exit(process.exitCode ?? 0);
say('building…');
await runStep('build', process.execPath, ['scripts/dev/build.mjs']);
say('preparing the database…');
await runStep('migration', process.execPath, ['dist/scripts/migrate.js']);

const env = { ...process.env, RELAY_MIGRATE_ON_START: process.env.RELAY_MIGRATE_ON_START ?? 'false' };
delete env.LOG_FORMAT;
delete env.RELAY_NATS_CREDENTIALS_DIR;
const generatedToken = !env.RELAY_ADMIN_TOKEN;
if (generatedToken) env.RELAY_ADMIN_TOKEN = `dev_${randomBytes(24).toString('base64url')}`;

// Stored secrets are sealed with RELAY_SECRET_KEYS; a local run keeps its generated key in
// .relay/secret-keys (git-ignored, owner-only) so the data stays readable from one run to the next.
if (!env.RELAY_SECRET_KEYS) {
  const keyFile = '.relay/secret-keys';
  if (!existsSync(keyFile)) {
    mkdirSync('.relay', { recursive: true });
    writeFileSync(keyFile, `local:${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    say(`RELAY_SECRET_KEYS was not set; generated a key into ${keyFile} (keep it: stored secrets need it).`);
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

// Every delivery carries an assertion the notifier signs with its P-256 key and the edge publishes
// the public half of; a local run keeps the pair in .relay/assertion-signing-key (the notifier's
// private key, then the public one the edge publishes at /.well-known/jwks.json).
if (!env.RELAY_ASSERTION_SIGNING_KEY || !env.RELAY_ASSERTION_PUBLIC_KEYS) {
  const keyFile = '.relay/assertion-signing-key';
  if (!existsSync(keyFile)) {
    mkdirSync('.relay', { recursive: true });
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const { x, y } = publicKey.export({ format: 'jwk' });
    const point = Buffer.concat([Buffer.from([4]), Buffer.from(x, 'base64url'), Buffer.from(y, 'base64url')]).toString('base64url');
    writeFileSync(keyFile, `local:${privateKey.export({ format: 'jwk' }).d}\nlocal:${point}\n`, { mode: 0o600 });
  }
  chmodSync(keyFile, 0o600);
  const [signingKey, publicKeys] = readFileSync(keyFile, 'utf8').trim().split('\n');
  env.RELAY_ASSERTION_SIGNING_KEY = signingKey;
  env.RELAY_ASSERTION_PUBLIC_KEYS = publicKeys;
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

// --- the services' output ---------------------------------------------------------------------
const prettyStream = pretty ? (await import('pino-pretty')).default : null;
/** When each service last wrote a line; and the request ids of log lines seen (the readiness probe's). */
const lastOutputAt = new Map();
const seenRequestIds = new Set();

/** Where one service's JSON log lines go: through pino-pretty on a terminal, unchanged otherwise. */
function logSink() {
  if (!prettyStream) return (line) => process.stdout.write(`${line}\n`);
  const stream = prettyStream({
    colorize: process.stdout.hasColors?.() ?? false,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service,context',
    messageFormat: '{service} {context}: {msg}',
    singleLine: true,
    destination: 1,
    sync: true,
  });
  return (line) => {
    if (line.startsWith('{')) stream.write(`${line}\n`);
    else process.stdout.write(`${line}\n`);
  };
}

/** Splits a stream into lines, each handed to `onLine`. */
function eachLine(stream, onLine) {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop();
    for (const line of lines) if (line) onLine(line);
  });
  stream.on('end', () => rest && onLine(rest));
}

function start(service) {
  const child = spawn(process.execPath, ['--enable-source-maps', `dist/apps/${service}/src/main.js`], {
    cwd: ROOT,
    env: { ...env, ...credentials?.[service] },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Only this supervisor signals the services (a terminal's Ctrl-C reaches it, not them twice).
    detached: true,
  });
  children.set(service, child);
  const sink = logSink();
  eachLine(child.stdout, (line) => {
    lastOutputAt.set(service, Date.now());
    const requestId = /"request_id":"(start-ready-[0-9a-f]+)"/.exec(line)?.[1];
    if (requestId) seenRequestIds.add(requestId);
    sink(line);
  });
  eachLine(child.stderr, (line) => {
    lastOutputAt.set(service, Date.now());
    process.stderr.write(`[${service}] ${line}\n`);
  });
  child.on('exit', (code, signal) => {
    children.delete(service);
    if (stopping) {
      if (children.size === 0) {
        say('every service stopped');
        process.exit(process.exitCode ?? 0);
      }
      return;
    }
    const now = Date.now();
    const recent = (crashes.get(service) ?? []).filter((at) => now - at < RESTART_WINDOW_MS);
    recent.push(now);
    crashes.set(service, recent);
    if (recent.length > MAX_RESTARTS) {
      say(`${service} exited ${recent.length} times within a minute (last: code ${code}, signal ${signal}); stopping the relay.`);
      stop(1, `${service} keeps crashing`);
      return;
    }
    const delay = Math.min(200 * 2 ** (recent.length - 1), 5000);
    say(`${service} exited (code ${code}, signal ${signal}); restarting in ${delay} ms`);
    setTimeout(() => !stopping && start(service), delay);
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Asks the edge's /readyz until it answers 200 (every service answers, one deployment); says what it waits for now and then. */
async function waitUntilReady(baseUrl) {
  const startedAt = Date.now();
  let nextNote = startedAt + 30_000;
  let last;
  while (!stopping) {
    const requestId = `start-ready-${randomBytes(6).toString('hex')}`;
    try {
      const response = await fetch(`${baseUrl}/readyz`, { headers: { 'x-request-id': requestId }, signal: globalThis.AbortSignal.timeout(5000) });
      const body = await response.text();
      if (response.ok) return requestId;
      last = `${response.status} ${body.slice(0, 300)}`;
    } catch (error) {
      last = error.cause?.code ?? error.message;
    }
    if (Date.now() > nextNote) {
      say(`still waiting for the relay to answer at ${baseUrl}/readyz (${Math.round((Date.now() - startedAt) / 1000)} s; last: ${last})`);
      nextNote = Date.now() + 30_000;
    }
    await sleep(READY_POLL_MS);
  }
  return null;
}

/** Waits until the lines the services wrote before they were ready are out (the probe's own access line included). */
async function settleLogs(requestId) {
  const deadline = Date.now() + LOG_SETTLE_MAX_MS;
  while (Date.now() < deadline && !stopping) {
    const quietSince = Math.max(0, ...lastOutputAt.values());
    if (seenRequestIds.has(requestId) && Date.now() - quietSince >= LOG_SETTLE_MS) return;
    await sleep(100);
  }
}

for (const service of SERVICES) start(service);
const port = env.EDGE_PORT || '8080';
const host = env.EDGE_HOST || '127.0.0.1';
const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
const baseUrl = `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
say(`started ${SERVICES.join(', ')}${credentials ? ` (each with its own NATS credential from ${credentials.dir})` : ''}; waiting for the edge to answer…`);
const probe = await waitUntilReady(baseUrl);
if (probe) {
  await settleLogs(probe);
  if (!stopping) {
    say(`the relay is ready; Ctrl-C, or SIGINT or SIGTERM to pid ${process.pid}, stops every service`);
    process.stdout.write(`\n  Edge:    ${baseUrl}\n  Console: ${baseUrl}/console/\n`);
    process.stdout.write(
      generatedToken
        ? `  RELAY_ADMIN_TOKEN=${env.RELAY_ADMIN_TOKEN}   (generated for this run, shown once; set RELAY_ADMIN_TOKEN to choose one)\n`
        : '  RELAY_ADMIN_TOKEN: the one set in your environment\n',
    );
  }
}
