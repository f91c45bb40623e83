import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REGISTER_TS = fileURLToPath(new URL('./process/register-ts.mjs', import.meta.url));
const MAIN = fileURLToPath(new URL('./process/noisy-tenant-main.ts', import.meta.url));

type NoiseEvent = { event: 'ready' } | { event: 'refusing' } | { event: 'stopped'; statuses: Record<string, number> };

export interface NoisyTenantOptions {
  url: string;
  /** The noisy agents' keys. */
  apiKeys: string[];
  /** Closed loops (each on its own keep-alive connection) per key. */
  loopsPerKey?: number;
  method?: string;
  params?: unknown;
}

/**
 * Agents of one tenant calling the relay as fast as it answers, from a separate process (so the
 * noise does not compete with the test's own calls in the test's event loop) over keep-alive
 * connections, as a real client would. Switched on and off between measurements; idle when off.
 */
export class NoisyTenant {
  private readonly waiting: Array<{ event: NoiseEvent['event']; resolve: (event: NoiseEvent) => void }> = [];
  private readonly exited: Promise<void>;

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (message: NoiseEvent) => {
      const index = this.waiting.findIndex((waiter) => waiter.event === message.event);
      if (index >= 0) this.waiting.splice(index, 1)[0].resolve(message);
    });
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  static async start(options: NoisyTenantOptions): Promise<NoisyTenant> {
    const settings = { loopsPerKey: 1, method: 'tasks/list', params: { filter: {} }, ...options };
    const child = spawn(process.execPath, ['--import', REGISTER_TS, MAIN], {
      cwd: ROOT,
      env: { ...process.env, NOISY_TENANT_SETTINGS: JSON.stringify(settings) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const tenant = new NoisyTenant(child);
    await tenant.next('ready', 30000);
    return tenant;
  }

  /** Starts the loops and waits until the relay refuses one of their calls (the tenant is at its limit). */
  async startRefused(timeoutMs = 30000): Promise<void> {
    const refusing = this.next('refusing', timeoutMs);
    this.child.send({ command: 'start' });
    await refusing;
  }

  /** Stops the loops; the count of answers by HTTP status since they started. */
  async stop(timeoutMs = 30000): Promise<Record<string, number>> {
    const stopped = this.next('stopped', timeoutMs);
    this.child.send({ command: 'stop' });
    return ((await stopped) as Extract<NoiseEvent, { event: 'stopped' }>).statuses;
  }

  async close(): Promise<void> {
    if (this.child.connected) this.child.disconnect();
    await this.exited;
  }

  private next(event: NoiseEvent['event'], timeoutMs: number): Promise<NoiseEvent> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the noisy tenant sent no ${event} in ${timeoutMs} ms`)), timeoutMs);
      this.waiting.push({
        event,
        resolve: (message) => {
          clearTimeout(timer);
          resolve(message);
        },
      });
    });
  }
}
