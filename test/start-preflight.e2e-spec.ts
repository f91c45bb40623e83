import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { eventually } from './support/eventually';
import { listeningPort } from './support/private-nats';
import { testDatabaseUrl, testNatsUrl } from './support/test-env';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Runs `npm start`'s script with `env` and returns its exit code and everything it printed. */
function start(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/dev/start.mjs'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('npm start checks its dependencies first', () => {
  let natsWithoutJetStream: ChildProcess | undefined;

  afterAll(async () => {
    if (natsWithoutJetStream && natsWithoutJetStream.exitCode === null) {
      natsWithoutJetStream.kill('SIGTERM');
      await new Promise((resolve) => natsWithoutJetStream!.once('exit', resolve));
    }
  });

  it('stops with one message naming NATS and how to get it when NATS is unreachable', async () => {
    const port = await closedPort();
    const { code, output } = await start({ DATABASE_URL: testDatabaseUrl(), NATS_URL: `nats://127.0.0.1:${port}` });
    expect(code).toBe(1);
    expect(output).toContain(`NATS is not reachable at nats://127.0.0.1:${port}`);
    expect(output).not.toContain('PostgreSQL');
    expect(output).toContain('apt-get install postgresql nats-server');
    expect(output).toContain('docker compose up -d nats postgres');
    expect(output).not.toContain('building…');
    expect(output).not.toContain('[supervisor]');
  });

  it('names every server of a NATS_URL list it could not reach, without their credentials', async () => {
    const [first, second] = [await closedPort(), await closedPort()];
    const { code, output } = await start({ DATABASE_URL: testDatabaseUrl(), NATS_URL: `nats://relay:hunter2@127.0.0.1:${first} , 127.0.0.1:${second}` });
    expect(code).toBe(1);
    expect(output).toContain(`NATS is not reachable at nats://127.0.0.1:${first}, nats://127.0.0.1:${second}`);
    expect(output).not.toContain('hunter2');
  });

  it('stops with one message naming PostgreSQL when DATABASE_URL points at a closed port', async () => {
    const port = await closedPort();
    const { code, output } = await start({ DATABASE_URL: `postgres://relay:secret@127.0.0.1:${port}/relay`, NATS_URL: testNatsUrl() });
    expect(code).toBe(1);
    expect(output).toContain(`PostgreSQL is not reachable at postgres://relay:***@127.0.0.1:${port}/relay`);
    expect(output).not.toContain('secret');
    expect(output).not.toContain('NATS is not');
    expect(output).not.toContain('building…');
  });

  it('names a NATS server without JetStream', async () => {
    // The server picks its own free port (one found free first could be taken by a file running alongside).
    natsWithoutJetStream = spawn('nats-server', ['-a', '127.0.0.1', '-p', '-1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    for (const stream of [natsWithoutJetStream.stdout, natsWithoutJetStream.stderr]) stream?.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
    await eventually(() => log.includes('Server is ready'), 20000, 100);
    const port = listeningPort(log);
    const { code, output } = await start({ DATABASE_URL: testDatabaseUrl(), NATS_URL: `nats://127.0.0.1:${port}` });
    expect(code).toBe(1);
    expect(output).toContain(`NATS at nats://127.0.0.1:${port} answers but has no JetStream`);
    // Listed after a server that is down, it is still reached (and found without JetStream).
    const down = await closedPort();
    const listed = await start({ DATABASE_URL: testDatabaseUrl(), NATS_URL: `nats://127.0.0.1:${down},nats://127.0.0.1:${port}` });
    expect(listed.code).toBe(1);
    expect(listed.output).toContain(`NATS at nats://127.0.0.1:${down}, nats://127.0.0.1:${port} answers but has no JetStream`);
  });
});
