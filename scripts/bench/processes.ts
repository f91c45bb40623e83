/**
 * Starting and stopping the servers under test as child processes: the relay's four services from
 * dist/ (configured only through the environment keys every service already reads) and the
 * baselines. Every child is ours: stopped by its own pid, never by name.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpClient, sleep } from './load-generator';

export const RELAY_SERVICES = ['edge', 'tasks', 'directory', 'notifier'] as const;
export type RelayService = (typeof RELAY_SERVICES)[number];

const here = dirname(fileURLToPath(import.meta.url));
/** dist/ (the build output that holds apps/ and scripts/). */
export const DIST = join(here, '..', '..');

export interface Child {
  name: string;
  process: ChildProcess;
  stderrTail: string[];
}

/** With `BENCH_CPU_PROFILE_DIR`, every child writes a V8 CPU profile there when it exits (Node refuses `--cpu-prof` in NODE_OPTIONS). */
function profilingArgs(): string[] {
  const directory = process.env.BENCH_CPU_PROFILE_DIR;
  return directory ? ['--cpu-prof', `--cpu-prof-dir=${directory}`] : [];
}

function startChild(name: string, script: string, env: Record<string, string>): Child {
  const child = spawn(process.execPath, [...profilingArgs(), script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderrTail: string[] = [];
  const keep = (chunk: Buffer): void => {
    stderrTail.push(chunk.toString('utf8'));
    if (stderrTail.length > 20) stderrTail.shift();
  };
  child.stderr?.on('data', keep);
  child.stdout?.on('data', () => undefined);
  return { name, process: child, stderrTail };
}

/** What one relay process gets beside the environment they share (`--nats secure`: its own NATS seed). */
export type RelayEnvOf = (service: RelayService) => Record<string, string>;

export const NO_OWN_ENV: RelayEnvOf = () => ({});

export function startRelay(env: Record<string, string>, envOf: RelayEnvOf = NO_OWN_ENV): Map<RelayService, Child> {
  const children = new Map<RelayService, Child>();
  // Services first, the edge last (it asks them for readiness).
  for (const service of ['directory', 'tasks', 'notifier', 'edge'] as const) children.set(service, startRelayProcess(service, env, service, envOf(service)));
  return children;
}

/** One process of the relay (also a further replica, named e.g. `tasks-2`); `own` is added to (and wins over) `env`. */
export function startRelayProcess(service: RelayService, env: Record<string, string>, name: string = service, own: Record<string, string> = {}): Child {
  return startChild(name, join(DIST, 'apps', service, 'src', 'main.js'), { ...env, ...own });
}

export function startBaseline(name: string, script: 'floor-server' | 'sdk-server' | 'upstream-agent' | 'handoff-floor', env: Record<string, string>): Child {
  return startChild(name, join(DIST, 'scripts', 'bench', 'baselines', `${script}.js`), env);
}

/** The port a child names in its `ready <port>` line on stdout (the upstream agent listens on a free one). */
export function readyPort(child: Child, timeoutMs = 60000): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => finish(new Error(`${child.name} printed no "ready <port>" within ${timeoutMs} ms`)), timeoutMs);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      const match = /^ready (\d+)$/m.exec(output);
      if (match) finish(null, Number(match[1]));
    };
    const onExit = (code: number | null): void => finish(new Error(`${child.name} exited (${code}): ${child.stderrTail.join('').slice(-800)}`));
    const finish = (error: Error | null, port?: number): void => {
      clearTimeout(timer);
      child.process.stdout?.off('data', onData);
      child.process.off('exit', onExit);
      if (error) reject(error);
      else resolve(port as number);
    };
    child.process.stdout?.on('data', onData);
    child.process.once('exit', onExit);
  });
}

/** Polls `path` until it answers 2xx, or fails naming the children that exited. */
export async function waitForHttp(client: HttpClient, path: string, children: Child[], timeoutMs = 60000, method: 'GET' | 'POST' = 'GET'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const dead = children.filter((child) => child.process.exitCode !== null);
    if (dead.length > 0)
      throw new Error(`${dead.map((child) => `${child.name} exited (${child.process.exitCode}): ${child.stderrTail.join('').slice(-800)}`).join('\n')}`);
    const ok = await (
      method === 'GET' ? client.get(path) : client.post(path, { jsonrpc: '2.0', id: 0, method: 'GetTask', params: { id: 'none' } }, { 'a2a-version': '1.0' })
    )
      .then((reply) => reply.status >= 200 && reply.status < 300)
      .catch(() => false);
    if (ok) return;
    await sleep(200);
  }
  throw new Error(`${path} did not answer within ${timeoutMs} ms`);
}

export async function stopChildren(children: Child[]): Promise<void> {
  await Promise.all(
    children.map(async (child) => {
      if (child.process.exitCode !== null || child.process.signalCode !== null) return;
      const exited = new Promise((resolve) => child.process.once('exit', resolve));
      child.process.kill('SIGTERM');
      const timer = setTimeout(() => child.process.kill('SIGKILL'), 10000);
      await exited;
      clearTimeout(timer);
    }),
  );
}

/** Runs the official SDK's own migrations (`a2a-db upgrade`, task store only) into the bench database. */
export async function migrateSdkTaskStore(databaseUrl: string): Promise<void> {
  const require = createRequire(import.meta.url);
  // The package exports no package.json; its main entry sits in dist/, beside the CLI.
  const cli = join(dirname(require.resolve('@a2a-js/sdk')), 'cli', 'a2a_db.js');
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'upgrade', '--url', databaseUrl, '--store', 'tasks'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`a2a-db upgrade exited ${code}: ${output}`))));
  });
}
