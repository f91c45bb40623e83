import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RelayHarness, ServiceName } from '../relay-harness';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const REGISTER_TS = fileURLToPath(new URL('./register-ts.mjs', import.meta.url));

/**
 * One relay service as a real separate `node` process (running the TypeScript sources), joined to
 * a harness's relay (same NATS prefix, database and settings), so a test can SIGKILL it.
 */
export class ServiceProcess {
  private output = '';
  private readonly exited: Promise<number | null>;

  private constructor(
    readonly service: ServiceName,
    private readonly child: ChildProcess,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  static async start(relay: RelayHarness, service: ServiceName, extra: Record<string, string> = {}, readyTimeoutMs = 30000): Promise<ServiceProcess> {
    const child = spawn(process.execPath, ['--enable-source-maps', '--import', REGISTER_TS, `apps/${service}/src/main.ts`], {
      cwd: ROOT,
      env: { ...relay.env(extra), LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const started = new ServiceProcess(service, child);
    try {
      await started.waitForOutput(`${service} service listening on NATS`, readyTimeoutMs);
    } catch (error) {
      await started.kill();
      throw error;
    }
    return started;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Stops the process where it is (SIGSTOP): it holds its connections and answers nothing until resumed. */
  pause(): void {
    this.child.kill('SIGSTOP');
  }

  /** Lets a paused process run on (SIGCONT). */
  resume(): void {
    this.child.kill('SIGCONT');
  }

  /** Sends a signal, e.g. SIGSTOP to stall the process (it keeps its connections) and SIGCONT to resume it. */
  signal(signal: NodeJS.Signals): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }

  /** Kills the process at once (no shutdown hooks, nothing drained) and waits for it to be gone. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** Waits until the process has printed `text` (or a match of it), e.g. a log line saying it did something. */
  async waitForOutput(text: string | RegExp, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (typeof text === 'string' ? !this.output.includes(text) : !text.test(this.output)) {
      if (this.child.exitCode !== null) throw new Error(`${this.service} process exited (${this.child.exitCode}):\n${this.output.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`${this.service} process printed no ${String(text)} in ${timeoutMs} ms:\n${this.output.slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
