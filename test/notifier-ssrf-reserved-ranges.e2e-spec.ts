import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { NOTIFIER_SUBJECTS, type DeliveryView } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { eventually } from './support/eventually';
import { LoopbackFence } from './support/loopback-fence';
import { AgentEvents, uniqueHandle } from './support/notifier-helpers';
import { OutboxWriter, taskEvent } from './support/outbox-writer';
import { RelayHarness } from './support/relay-harness';

/**
 * Documentation, benchmarking, shared-address and site-local ranges are never a webhook's public
 * home: a delivery to one is refused (dead letter) before any connection is tried.
 */
describe('notifier: SSRF guard on reserved, documentation and site-local ranges', () => {
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
    ['site-local IPv6 (fec0::/10)', 'http://[fec0::1]/hook'],
    ['documentation IPv6 (2001:db8::/32)', 'http://[2001:db8::10]:8443/hook'],
    ['TEST-NET-1 (192.0.2.0/24)', 'http://192.0.2.10/hook'],
    ['TEST-NET-2 (198.51.100.0/24)', 'http://198.51.100.7:8080/hook'],
    ['TEST-NET-3 (203.0.113.0/24)', 'https://203.0.113.200/hook'],
    ['TEST-NET-3, IPv4-mapped', 'http://[::ffff:203.0.113.5]/hook'],
    ['benchmarking (198.18.0.0/15)', 'http://198.19.0.1/hook'],
    ['carrier-grade NAT (100.64.0.0/10)', 'http://100.100.100.100/hook'],
  ])(
    'refuses %s (%s) as a dead letter, before any connection is attempted',
    async (_form, url) => {
      const sender = uniqueHandle('ssrfr-s');
      const recipient = uniqueHandle('ssrfr-r');
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
