import { randomUUID } from 'node:crypto';
import dns from 'node:dns';
import net from 'node:net';
import { NOTIFIER_SUBJECTS, type DeliveryView } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { eventually } from './support/eventually';
import { AgentEvents, uniqueHandle } from './support/notifier-helpers';
import { OutboxWriter, taskEvent } from './support/outbox-writer';
import { RelayHarness } from './support/relay-harness';

/**
 * Fences this test process so that nothing leaves the machine: a connection or a name lookup for
 * anything but a loopback target fails before a packet is sent, and is recorded. IPv6 addresses
 * that embed an IPv4 address route off this machine, so the guard must refuse them before the
 * fence is ever reached.
 */
class LoopbackFence {
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

describe('notifier: SSRF guard on IPv6 forms that embed an IPv4 address', () => {
  const fence = new LoopbackFence();
  let relay: RelayHarness;
  let outbox: OutboxWriter;
  let agents: AgentEvents;

  beforeAll(async () => {
    fence.install();
    relay = await RelayHarness.start({ env: { RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms' } });
    outbox = await OutboxWriter.connect();
    agents = await AgentEvents.open(relay);
  });

  afterAll(async () => {
    await agents?.close();
    await relay?.stop();
    await outbox?.end();
    fence.uninstall();
  });

  it('fences this process: a non-loopback connection fails without leaving the machine', async () => {
    const before = fence.attempts.length;
    const socket = net.connect({ host: '2002:7f00:1::', port: 9 });
    await expect(new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject))).rejects.toThrow(/fenced/);
    expect(fence.attempts.slice(before)).toEqual(['connect 2002:7f00:1::']);
    fence.attempts.splice(before);
  });

  it.each([
    ['IPv4-compatible loopback', 'http://[::127.0.0.1]:8080/hook'],
    ['IPv4-compatible private', 'http://[::10.0.0.7]/hook'],
    ['IPv4-mapped metadata (hex)', 'http://[::ffff:a9fe:a9fe]/latest/meta-data/'],
    ['IPv4-translated loopback', 'http://[::ffff:0:127.0.0.1]:8080/hook'],
    ['NAT64 of the metadata address', 'http://[64:ff9b::169.254.169.254]/latest/meta-data/'],
    ['local-use NAT64', 'http://[64:ff9b:1::a00:7]/hook'],
    ['6to4 of loopback', 'http://[2002:7f00:1::]/hook'],
    ['6to4 of a private address', 'http://[2002:c0a8:101::1]/hook'],
    ['Teredo with a private client', 'http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/hook'],
  ])(
    'refuses %s (%s) as a dead letter, before any connection is attempted',
    async (_form, url) => {
      const sender = uniqueHandle('ssrf6-s');
      const recipient = uniqueHandle('ssrf6-r');
      await agents.register(sender, {});
      await agents.register(recipient, { webhook: url });
      const task = `task-${randomUUID()}`;
      await outbox.write([taskEvent(task, 'created', { sender, recipient, sequenceNo: 1 })]);
      const rpc = relay.edge.get(NatsRpcClient);
      const [delivery] = (await eventually(
        async (): Promise<DeliveryView[] | false> => {
          const found: DeliveryView[] = (await rpc.request(NOTIFIER_SUBJECTS.listDeliveries, { task_id: task })).deliveries;
          return found.length === 1 && found[0].status !== 'pending' ? found : false;
        },
        30000,
        100,
      )) as DeliveryView[];
      expect(fence.attempts).toEqual([]);
      expect(delivery).toMatchObject({
        status: 'dead',
        attempts: 1,
        last_status_code: null,
        last_error: expect.stringMatching(/^refused: address .* is not allowed/),
      });
    },
    45000,
  );
});
