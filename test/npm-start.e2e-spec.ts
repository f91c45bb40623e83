import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import request from 'supertest';
import { dropDatabase } from '../libs/database/src/create-database';
import { writeNatsCredentials } from '../scripts/nats-credentials';
import { eventually } from './support/eventually';
import { ok } from './support/json-rpc';
import { PrivateNatsServer } from './support/private-nats';
import { TEST_SECRET_KEYS, TEST_STREAM_ID_KEY } from './support/relay-harness';
import { testDatabaseUrl, uniqueSubjectPrefix } from './support/test-env';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const TOKEN_LINE = /^ {2}RELAY_ADMIN_TOKEN=(dev_[A-Za-z0-9_-]+) {3}\(generated for this run/;
/** The first start may build the relay (a minute or more on a loaded machine). */
const READY_WITHIN_MS = 240_000;

/** A loopback port nothing listens on (bound, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A process's parent and state, from /proc (null once it is gone or a zombie). */
function procStat(pid: number): { ppid: number; state: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return state === 'Z' ? null : { ppid: Number(ppid), state };
  } catch {
    return null;
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** A process's environment, from /proc. */
function environOf(pid: number): Record<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8')
    .split('\0')
    .filter(Boolean)
    .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]);
  return Object.fromEntries(entries) as Record<string, string>;
}

/** `root` and every process under it, with their command lines. */
function processTree(root: number): Map<number, string> {
  const childrenOf = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat) childrenOf.set(stat.ppid, [...(childrenOf.get(stat.ppid) ?? []), Number(entry)]);
  }
  const tree = new Map<number, string>();
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    if (tree.has(pid) || !procStat(pid)) continue;
    tree.set(pid, commandLine(pid));
    queue.push(...(childrenOf.get(pid) ?? []));
  }
  return tree;
}

interface StartedRelay {
  /** What `npm start` printed, stdout and stderr as they came (a terminal's control characters removed). */
  output(): string;
  lines(): string[];
  /** The process a user started: `npm start` itself. */
  npmPid(): number;
  child: ChildProcess;
}

/** `npm start [-- args]` with `env`; on a terminal of its own (`script`) when `tty`. */
function npmStart(env: Record<string, string>, args: string[] = [], tty = false): StartedRelay {
  const npmArgs = ['start', ...(args.length > 0 ? ['--', ...args] : [])];
  const fullEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env };
  const child = tty
    ? spawn('script', ['-qfec', ['npm', ...npmArgs].join(' '), '/dev/null'], { cwd: ROOT, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn('npm', npmArgs, { cwd: ROOT, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  for (const stream of [child.stdout, child.stderr]) stream?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const output = (): string => stripVTControlCharacters(text.replace(/\r/g, ''));
  return {
    child,
    output,
    lines: () => output().split('\n'),
    npmPid: () => {
      if (!tty) return child.pid as number;
      // Under `script`: the parent of the supervisor (`npm start` runs it with exec, in place of its shell).
      const supervisor = [...processTree(child.pid as number)].find(([, command]) => command.endsWith('scripts/dev/start.mjs'));
      if (!supervisor) throw new Error(`no supervisor under ${child.pid}:\n${output()}`);
      return (procStat(supervisor[0]) as { ppid: number }).ppid;
    },
  };
}

/** The databases `npm start` made for the tests, dropped after each. */
const databases: string[] = [];

/**
 * A database of the relay's own, which `npm start` makes: what other test files left in the
 * worker's database (upstream tasks its notifier would follow, logging after the token) is not there.
 */
function ownDatabaseUrl(): string {
  const url = new URL(testDatabaseUrl());
  url.pathname = `${url.pathname}_start_${randomBytes(3).toString('hex')}`;
  databases.push(url.toString());
  return url.toString();
}

/** The settings of one test relay: its own NATS, port, subject prefix and database. */
async function relayEnv(nats: PrivateNatsServer): Promise<{ env: Record<string, string>; url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    env: {
      DATABASE_URL: ownDatabaseUrl(),
      NATS_URL: nats.url,
      NATS_SUBJECT_PREFIX: uniqueSubjectPrefix(),
      EDGE_PORT: String(port),
      RELAY_PUBLIC_URL: url,
      METRICS_PORT: '0',
      RELAY_SECRET_KEYS: TEST_SECRET_KEYS,
      RELAY_STREAM_ID_KEY: TEST_STREAM_ID_KEY,
      NATS_REQUEST_TIMEOUT_MS: '20000',
    },
  };
}

async function tokenOf(relay: StartedRelay): Promise<string> {
  const deadline = Date.now() + READY_WITHIN_MS;
  for (;;) {
    if (relay.child.exitCode !== null) throw new Error(`npm start exited (${relay.child.exitCode}):\n${relay.output()}`);
    const token = relay
      .lines()
      .map((line) => TOKEN_LINE.exec(line)?.[1])
      .find(Boolean);
    if (token) return token;
    if (Date.now() > deadline) throw new Error(`npm start printed no token within ${READY_WITHIN_MS} ms:\n${relay.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Whether the relay's edge found its port taken (another test's server took the free port meanwhile). */
function edgePortTaken(relay: StartedRelay): boolean {
  return /EADDRINUSE/.test(relay.output());
}

/**
 * Starts the relay with `env` made for a free port (after `adjust`), and waits for its token; the
 * relay's own edge must say it listens on that URL (a server of another test answering there would
 * otherwise pass for it). Should another process take the port first, starts again on another.
 */
async function startOnFreePort(
  nats: PrivateNatsServer,
  started: StartedRelay[],
  options: { args?: string[]; tty?: boolean; adjust?: (env: Record<string, string>) => void } = {},
): Promise<{ relay: StartedRelay; token: string; url: string }> {
  for (let attempt = 1; ; attempt++) {
    const { env, url } = await relayEnv(nats);
    options.adjust?.(env);
    const relay = npmStart(env, options.args, options.tty);
    started.push(relay);
    try {
      const token = await tokenOf(relay);
      await eventually(() => expect(relay.output()).toContain(`edge listening on ${url}`), 30_000, 100);
      return { relay, token, url };
    } catch (error) {
      if (!edgePortTaken(relay) || attempt >= 3)
        throw new Error(`${(error as Error).message}\n--- npm start said:\n${relay.output().slice(-4000)}`, { cause: error });
      relay.child.kill('SIGTERM');
      await eventually(() => expect(relay.child.exitCode ?? relay.child.signalCode).not.toBeNull(), 30_000, 100);
    }
  }
}

/** The lines after the token line (the token line last means none). */
function linesAfterToken(relay: StartedRelay): string[] {
  const lines = relay.lines();
  const at = lines.findIndex((line) => TOKEN_LINE.test(line));
  return lines.slice(at + 1).filter((line) => line.trim() !== '');
}

/** Sends `signal` to the pid a user started and expects npm, the supervisor and every service gone within 10 s. */
async function expectStopsOn(relay: StartedRelay, signal: NodeJS.Signals): Promise<void> {
  const npmPid = relay.npmPid();
  const tree = processTree(npmPid);
  const services = [...tree.values()].filter((command) => /dist\/apps\/(edge|tasks|directory|notifier)\/src\/main\.js/.test(command));
  expect(services).toHaveLength(4);
  process.kill(npmPid, signal);
  await eventually(
    () => {
      const left = [...tree].filter(([pid, command]) => procStat(pid) && commandLine(pid) === command);
      expect(left).toEqual([]);
    },
    10_000,
    100,
  );
  expect(relay.output()).toContain(`[supervisor] ${signal} received: stopping directory, tasks, notifier, edge…`);
  expect(relay.output()).toContain('[supervisor] every service stopped');
}

describe('npm start', () => {
  const started: StartedRelay[] = [];
  const servers: PrivateNatsServer[] = [];
  const folders: string[] = [];

  afterEach(async () => {
    for (const relay of started.splice(0)) {
      if (relay.child.exitCode !== null) continue;
      for (const pid of [...processTree(relay.child.pid as number).keys()].reverse()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
    }
    for (const server of servers.splice(0)) await server.stop();
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
    for (const database of databases.splice(0)) await dropDatabase(database);
  });

  it('prints the URL and the token last, once the edge answers, logs JSON off a terminal, and stops everything on SIGTERM to its pid', async () => {
    const nats = await PrivateNatsServer.start();
    servers.push(nats);
    const { relay, token, url } = await startOnFreePort(nats, started);

    // Nothing follows the token line while nobody asks anything (the services write their lines at least once a second).
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(linesAfterToken(relay)).toEqual([]);
    const lines = relay.lines();
    const at = lines.findIndex((line) => TOKEN_LINE.test(line));
    expect(lines.slice(at - 3, at)).toEqual(['', `  Edge:    ${url}`, `  Console: ${url}/console/`]);
    const logLines = lines.slice(0, at).filter((line) => line.startsWith('{'));
    expect(logLines.length).toBeGreaterThan(0);
    const services = new Set(logLines.map((line) => (JSON.parse(line) as { service: string }).service));
    expect(services).toEqual(new Set(['edge', 'tasks', 'directory', 'notifier']));
    // Nest's route and module lines are debug; no warning of a new NATS carries a stack trace.
    expect(relay.output()).not.toMatch(/Mapped \{|dependencies initialized|"stack"/);

    // The first request's access line comes right after the token line.
    const requestId = `first-${randomBytes(4).toString('hex')}`;
    await request(url).get('/admin/agents').set('authorization', `Bearer ${token}`).set('x-request-id', requestId).expect(200);
    await eventually(() => expect(linesAfterToken(relay).length).toBeGreaterThan(0), 30_000, 100);
    const first = JSON.parse(linesAfterToken(relay)[0]) as Record<string, unknown>;
    expect(first).toMatchObject({ service: 'edge', request_id: requestId, path: '/admin/agents', status: 200 });

    await expectStopsOn(relay, 'SIGTERM');
  }, 300_000);

  it('on a terminal: readable log lines, the token last, and SIGINT to its pid stops everything', async () => {
    const nats = await PrivateNatsServer.start();
    servers.push(nats);
    const { relay, url } = await startOnFreePort(nats, started, { tty: true });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(linesAfterToken(relay)).toEqual([]);
    const lines = relay.lines();
    expect(lines.filter((line) => line.startsWith('{'))).toEqual([]);
    expect(lines).toContainEqual(expect.stringMatching(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: edge Bootstrap: edge listening on http:\/\/127\.0\.0\.1:\d+/));
    expect(lines).toContain(`  Edge:    ${url}`);
    await expectStopsOn(relay, 'SIGINT');
  }, 300_000);

  it('with --nats-credentials runs each service with its own credential, and a handoff works with authorization on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-start-nats-'));
    folders.push(dir);
    copyFileSync(join(ROOT, 'docker', 'nats', 'nats.conf'), join(dir, 'nats.conf'));
    const prefix = uniqueSubjectPrefix();
    writeNatsCredentials({ dir, subjectPrefix: prefix, consumers: [], rotate: [], retire: false });
    const nats = await PrivateNatsServer.start({ configFile: join(dir, 'nats.conf') });
    servers.push(nats);
    const { env } = await relayEnv(nats);
    env.NATS_SUBJECT_PREFIX = prefix;

    // Without the credentials the start stops before building, saying what to give it.
    const refused = npmStart(env);
    await eventually(() => expect(refused.child.exitCode).toBe(1), 60_000);
    expect(refused.output()).toContain(`NATS at ${nats.url} refused the credential`);
    expect(refused.output()).toContain('--nats-credentials DIR');
    expect(refused.output()).not.toContain('building');

    const { relay, token, url } = await startOnFreePort(nats, started, {
      args: ['--nats-credentials', dir],
      adjust: (relayEnvironment) => (relayEnvironment.NATS_SUBJECT_PREFIX = prefix),
    });
    expect(relay.output()).toContain(`(each with its own NATS credential from ${dir})`);
    expect(relay.output()).not.toContain('has no authorization');

    const register = async (handle: string): Promise<string> => {
      const response = await request(url).post('/admin/agents').set('authorization', `Bearer ${token}`).send({ handle, name: handle }).expect(201);
      return response.body.api_key as string;
    };
    const suffix = randomBytes(3).toString('hex');
    const aliceKey = await register(`alice-${suffix}@start`);
    const bobKey = await register(`bob-${suffix}@start`);
    const sent = await ok(url, aliceKey, 'message/send', {
      recipient: `bob-${suffix}@start`,
      message: { role: 'user', parts: [{ type: 'text', text: 'Over NATS with authorization on.' }] },
    });
    const taskId = sent.task_id as string;
    await ok(url, bobKey, 'tasks/update', { task_id: taskId, transition: 'accept' });
    await ok(url, bobKey, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'Done.' });
    expect((await ok(url, aliceKey, 'tasks/get', { task_id: taskId })).status.state).toBe('completed');
    // Each service connected with its own user: the server refused nothing.
    expect(nats.log).not.toMatch(/Authorization Violation|Permissions Violation/);
    // Each service process holds its own seed file, and no other credential setting.
    const services = [...processTree(relay.npmPid())].flatMap(([pid, command]) => {
      const service = /dist\/apps\/(edge|tasks|directory|notifier)\/src\/main\.js/.exec(command)?.[1];
      return service ? [{ service, env: environOf(pid) }] : [];
    });
    expect(services.map(({ service }) => service).sort()).toEqual(['directory', 'edge', 'notifier', 'tasks']);
    for (const { service, env: serviceEnv } of services) {
      expect(serviceEnv.NATS_NKEY_SEED_FILE).toBe(join(dir, 'credentials', `${service}.nk`));
      expect(serviceEnv.NATS_CREDS_FILE).toBeUndefined();
    }

    await expectStopsOn(relay, 'SIGTERM');
  }, 300_000);
});
