import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { NOTIFIER_SUBJECTS, type DeliveryView } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { eventually } from './support/eventually';
import { LoopbackFence } from './support/loopback-fence';
import { AgentEvents, uniqueHandle } from './support/notifier-helpers';
import { OutboxWriter, taskEvent } from './support/outbox-writer';
import { RelayHarness } from './support/relay-harness';

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
