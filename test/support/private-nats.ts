import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

const NATS_SERVER = process.env.NATS_SERVER_BIN || '/usr/sbin/nats-server';

/**
 * How long (s) the server waits for a client's credentials. Its default (2 s) times out a client
 * that a loaded machine keeps from answering in time, which a test would read as a refusal of the
 * credentials themselves ("Authentication Timeout" instead of "Authorization Violation").
 */
const AUTH_TIMEOUT_SECONDS = 20;

/**
 * A NATS server with JetStream of a test's own, on a loopback port, that the test may kill and
 * start again (the shared server is never touched). Its JetStream store is a temporary folder.
 * The first start lets the server pick a free port itself (a port found free and released first
 * could be taken by a test file running alongside before the server binds it); a restart reuses it.
 */
export class PrivateNatsServer {
  private child?: ChildProcess;
  private output = '';
  private boundPort?: number;

  /** The server's JetStream store. */
  private readonly storeDir: string;

  private constructor(
    /** The server's own folder: its store and its configuration. */
    private readonly workDir: string,
    private readonly configFile?: string,
  ) {
    this.storeDir = join(workDir, 'store');
  }

  /** `configFile`: a nats-server configuration (authorization, TLS) the server starts with, beside the command-line flags. */
  static async start(options: { configFile?: string } = {}): Promise<PrivateNatsServer> {
    const server = new PrivateNatsServer(mkdtempSync(join(tmpdir(), 'relay-nats-')), options.configFile);
    await server.launch();
    return server;
  }

  get port(): number {
    if (this.boundPort === undefined) throw new Error('the private nats-server has not started');
    return this.boundPort;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** SIGKILL (its memory streams are gone), then the same server on the same port with an empty store. */
  async restart(): Promise<void> {
    await this.kill();
    rmSync(this.storeDir, { recursive: true, force: true });
    await this.launch();
  }

  /** SIGKILL, then, after `downMs`, the same server on the same port with the store it had: its file streams (and their duplicate windows) come back. */
  async restartKeepingStore(downMs = 0): Promise<void> {
    await this.kill();
    await new Promise((resolve) => setTimeout(resolve, downMs));
    await this.launch();
  }

  /** Makes the server read its configuration file again (SIGHUP), and waits until it says it has. */
  async reload(): Promise<void> {
    const before = this.output.length;
    this.child?.kill('SIGHUP');
    const deadline = Date.now() + 30000;
    while (!/Reloaded server configuration|Reloaded: /.test(this.output.slice(before))) {
      if (/Failed to reload|error/i.test(this.output.slice(before))) throw new Error(`nats-server did not reload:\n${this.output.slice(before)}`);
      if (Date.now() > deadline) throw new Error(`nats-server did not reload:\n${this.output.slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** What the server printed (a test reads its authorization errors). */
  get log(): string {
    return this.output;
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.workDir, { recursive: true, force: true });
  }

  private async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /**
   * The configuration the server reads: the test's own (when it gave one) and the credentials'
   * timeout, in a file of the server's own that includes the test's (read again on each reload).
   */
  private serverConfig(): string {
    const file = join(this.workDir, 'server.conf');
    const included = this.configFile ? [`include ${JSON.stringify(relative(dirname(file), this.configFile))}`] : [];
    writeFileSync(file, [...included, `authorization { timeout: ${AUTH_TIMEOUT_SECONDS} }`, ''].join('\n'));
    return file;
  }

  private async launch(): Promise<void> {
    this.output = '';
    const child = spawn(NATS_SERVER, ['-c', this.serverConfig(), '-a', '127.0.0.1', '-p', String(this.boundPort ?? -1), '-js', '-sd', this.storeDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
    this.child = child;
    const deadline = Date.now() + 30000;
    while (!this.output.includes('Server is ready')) {
      if (child.exitCode !== null) throw new Error(`nats-server exited (${child.exitCode}):\n${this.output.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`nats-server did not start:\n${this.output.slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    this.boundPort ??= listeningPort(this.output);
  }
}

/** The client port a nats-server reported it listens on. */
export function listeningPort(output: string): number {
  const port = /Listening for client connections on [^\s]+:(\d+)/.exec(output)?.[1];
  if (!port) throw new Error(`nats-server did not say which port it listens on:\n${output.slice(-2000)}`);
  return Number(port);
}
