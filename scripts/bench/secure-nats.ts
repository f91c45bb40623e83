/**
 * `--nats secure`: a nats-server of the bench's own, set up as a deployment that treats NATS as a
 * trust boundary (docs/nats-security.md): TLS with the server verified against a CA and client
 * certificates required (`verify: true`), and the authorization `writeNatsCredentials` writes for
 * the bench's subject prefix, so each relay process connects as its own least-privilege nkey user.
 * The bench's own helpers (the event watch, the stream clean-up) connect as one more user, with
 * every permission, added to that file. The server runs on a free loopback port with a JetStream
 * store of its own; `stop` kills it and removes its folder (certificates, seeds, store).
 * `--nats private` starts the same server without TLS and authorization: the comparison that
 * isolates what TLS and credentials cost from what a shared NATS (other clients' traffic) does.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nkeys } from '@nats-io/transport-node';
import { parseNatsServers, type NatsServers } from '@app/config';
import { seedFile, writeNatsCredentials } from '../nats-credentials';
import type { RelayService } from './processes';

const NATS_SERVER = process.env.NATS_SERVER_BIN || '/usr/sbin/nats-server';
/** The holder name of the bench's own user (not a relay process: full permissions). */
export const BENCH_NATS_HOLDER = 'bench';

export interface BenchNats {
  /** `tls://127.0.0.1:<port>` (secure), `nats://127.0.0.1:<port>` (private). */
  url: string;
  pid: number;
  /** What every relay process gets: NATS_URL and (secure) the TLS files. */
  env: Record<string, string>;
  /** What one relay process gets besides: (secure) its own seed (NATS_NKEY_SEED_FILE). */
  envOf(service: RelayService): Record<string, string>;
  /** The bench's own connection (every permission): for natsConnectOptions / openJetStream. */
  benchServers: NatsServers;
  /** The lines the server logged about a permission or authorization violation (none when every process had what it needs). */
  violations(): string[];
  stop(): Promise<void>;
}

/** A CA, a server certificate for 127.0.0.1 and a client certificate (clientAuth), made with openssl into `dir`. */
export function makeCertificates(dir: string): void {
  const run = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  };
  const sign = (name: string): void =>
    run(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    );
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=relay bench CA', '-keyout', 'ca.key', '-out', 'ca.pem');
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'server.key', '-out', 'server.csr');
  sign('server');
  writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=agentrelay bench', '-keyout', 'client.key', '-out', 'client.csr');
  sign('client');
}

/** `auth.conf` with one more user, by nkey and without permissions (nats-server then allows it everything). */
export function withFullPermissionUser(authConf: string, nkey: string): string {
  const marker = '  users = [\n';
  if (!authConf.includes(marker)) throw new Error('auth.conf has no "users = [" list to add the bench user to');
  return authConf.replace(marker, `${marker}    { nkey: ${JSON.stringify(nkey)} },\n`);
}

/** The nats-server configuration of the private mode: the relay's payload limit, nothing else. */
export function privateNatsConfig(): string {
  return ["# The bench's own NATS in --nats private mode (scripts/bench/secure-nats.ts).", 'max_payload: 2MB', ''].join('\n');
}

/** The nats-server configuration of the secure mode: the relay's payload limit, TLS verifying clients, the generated authorization. */
export function secureNatsConfig(dir: string): string {
  return [
    "# The bench's own NATS in --nats secure mode (scripts/bench/secure-nats.ts).",
    'max_payload: 2MB',
    `tls { cert_file: ${JSON.stringify(join(dir, 'server.pem'))}, key_file: ${JSON.stringify(join(dir, 'server.key'))}, ca_file: ${JSON.stringify(join(dir, 'ca.pem'))}, verify: true, timeout: 5 }`,
    // nats-server resolves an include against the configuration file's folder (dir).
    'include "credentials/auth.conf"',
    '',
  ].join('\n');
}

/** Starts the bench's own nats-server: `secure` with TLS and the relay's authorization, else (private) plain. */
export async function startBenchNats(subjectPrefix: string, secure: boolean): Promise<BenchNats> {
  const dir = mkdtempSync(join(tmpdir(), 'relay-bench-nats-'));
  let child: ChildProcess | undefined;
  const stop = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (running && running.exitCode === null && running.signalCode === null) {
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGTERM');
      const timer = setTimeout(() => running.kill('SIGKILL'), 10000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const benchSeed = seedFile(dir, BENCH_NATS_HOLDER);
    if (secure) {
      makeCertificates(dir);
      writeNatsCredentials({ dir, subjectPrefix, consumers: [], rotate: [], retire: false });
      const benchUser = nkeys.createUser();
      writeFileSync(benchSeed, new TextDecoder().decode(benchUser.getSeed()) + '\n', { mode: 0o600 });
      const authPath = join(dir, 'credentials', 'auth.conf');
      writeFileSync(authPath, withFullPermissionUser(readFileSync(authPath, 'utf8'), benchUser.getPublicKey()));
    }
    const configFile = join(dir, 'nats.conf');
    writeFileSync(configFile, secure ? secureNatsConfig(dir) : privateNatsConfig());
    const storeDir = join(dir, 'jetstream');

    let output = '';
    const violationLines: string[] = [];
    let partial = '';
    child = spawn(NATS_SERVER, ['-c', configFile, '-a', '127.0.0.1', '-p', '-1', '-js', '-sd', storeDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      output = (output + text).slice(-20000);
      // Whole lines only: a chunk may end inside one.
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      violationLines.push(...lines.filter((line) => /Violation/.test(line)));
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const deadline = Date.now() + 30000;
    while (!output.includes('Server is ready')) {
      if (child.exitCode !== null) throw new Error(`nats-server exited (${child.exitCode}):\n${output.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`nats-server did not start:\n${output.slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const port = /Listening for client connections on [^\s]+:(\d+)/.exec(output)?.[1];
    if (!port) throw new Error(`nats-server did not say which port it listens on:\n${output.slice(-2000)}`);
    const violations = (): string[] => violationLines.slice();
    if (!secure) {
      const url = `nats://127.0.0.1:${port}`;
      return { url, pid: child.pid!, env: { NATS_URL: url }, envOf: () => ({}), benchServers: parseNatsServers(url), violations, stop };
    }
    const url = `tls://127.0.0.1:${port}`;
    const tls = { caFile: join(dir, 'ca.pem'), certFile: join(dir, 'client.pem'), keyFile: join(dir, 'client.key') };
    return {
      url,
      pid: child.pid!,
      env: { NATS_URL: url, NATS_TLS_CA_FILE: tls.caFile, NATS_TLS_CERT_FILE: tls.certFile, NATS_TLS_KEY_FILE: tls.keyFile },
      envOf: (service) => ({ NATS_NKEY_SEED_FILE: seedFile(dir, service) }),
      benchServers: { ...parseNatsServers(url), credentials: { nkeySeedFile: benchSeed, tls } },
      violations,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
