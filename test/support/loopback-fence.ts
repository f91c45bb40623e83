import dns from 'node:dns';
import net from 'node:net';

/**
 * Fences this test process so that nothing leaves the machine: a connection or a name lookup for
 * anything but a loopback target fails before a packet is sent, and is recorded. An SSRF test
 * expects no attempt at all: the guard must refuse its targets before the fence is ever reached.
 */
export class LoopbackFence {
  readonly attempts: string[] = [];
  private readonly originalConnect = net.Socket.prototype.connect;
  private readonly originalLookup = dns.lookup;

  static isLoopback(host: string): boolean {
    const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
    return bare === 'localhost' || bare === '::1' || /^127\./.test(bare) || /^::ffff:127\./.test(bare);
  }

  /** The host a `Socket#connect` call targets; undefined for a local (IPC) socket path. */
  private static targetOf(args: unknown[]): string | undefined {
    const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
    if (typeof first === 'object' && first !== null) {
      const options = first as { host?: string; path?: string };
      return options.path !== undefined ? undefined : (options.host ?? 'localhost');
    }
    if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) return typeof args[1] === 'string' ? args[1] : 'localhost';
    return undefined;
  }

  install(): void {
    const attempts = this.attempts;
    const originalConnect = this.originalConnect;
    net.Socket.prototype.connect = function fencedConnect(this: net.Socket, ...args: unknown[]): net.Socket {
      const target = LoopbackFence.targetOf(args);
      if (target === undefined || LoopbackFence.isLoopback(target)) return (originalConnect as (...a: unknown[]) => net.Socket).apply(this, args);
      attempts.push(`connect ${target}`);
      process.nextTick(() => this.destroy(new Error(`fenced: no connection to ${target} from this test`)));
      return this;
    } as typeof net.Socket.prototype.connect;
    const originalLookup = this.originalLookup;
    dns.lookup = function fencedLookup(hostname: string, ...rest: unknown[]): void {
      if (LoopbackFence.isLoopback(hostname)) return (originalLookup as (...a: unknown[]) => void)(hostname, ...rest);
      attempts.push(`lookup ${hostname}`);
      const callback = rest[rest.length - 1] as (error: Error) => void;
      process.nextTick(() => callback(Object.assign(new Error(`fenced: no lookup of ${hostname} from this test`), { code: 'ENOTFOUND' })));
    } as typeof dns.lookup;
  }

  uninstall(): void {
    net.Socket.prototype.connect = this.originalConnect;
    dns.lookup = this.originalLookup;
  }
}
