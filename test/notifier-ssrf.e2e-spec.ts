import { randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { NOTIFIER_SUBJECTS, type DeliveryView } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { eventually } from './support/eventually';
import { AgentEvents, uniqueHandle } from './support/notifier-helpers';
import { OutboxWriter, taskEvent } from './support/outbox-writer';
import { RelayHarness } from './support/relay-harness';
import { WebhookSink } from './support/webhook-sink';

describe('notifier: SSRF guard on (the default)', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let outbox: OutboxWriter;
  let agents: AgentEvents;

  beforeAll(async () => {
    const own = await lookup(hostname(), { all: true });
    expect(own.length).toBeGreaterThan(0);
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({ env: { RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms' } });
    outbox = await OutboxWriter.connect();
    agents = await AgentEvents.open(relay);
  });

  afterAll(async () => {
    await agents?.close();
    await relay?.stop();
    await outbox?.end();
    await sink?.stop();
  });

  it.each([
    ['a loopback address', (sinkPort: number) => `http://127.0.0.1:${sinkPort}/hook`],
    ['the name localhost', (sinkPort: number) => `http://localhost:${sinkPort}/hook`],
    // This machine's own name resolves to a loopback address (/etc/hosts): refused at DNS resolution, not by name.
    ['a name that resolves to this machine', (sinkPort: number) => `http://${hostname()}:${sinkPort}/hook`],
    ['the IPv6 loopback', (sinkPort: number) => `http://[::1]:${sinkPort}/hook`],
    ['a private address', () => 'http://10.0.0.7/hook'],
    ['the metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ['a metadata host name', () => 'http://metadata.google.internal/computeMetadata/v1/'],
  ])(
    'refuses %s without connecting, as a dead letter with no retry',
    async (_label, urlOf) => {
      const sender = uniqueHandle('ssrf-s');
      const recipient = uniqueHandle('ssrf-r');
      await agents.register(sender, {});
      await agents.register(recipient, { webhook: urlOf(sink.port), slack: urlOf(sink.port) });
      const task = `task-${randomUUID()}`;
      await outbox.write([taskEvent(task, 'created', { sender, recipient, sequenceNo: 1 })]);
      const rpc = relay.edge.get(NatsRpcClient);
      const deliveries = await eventually(async (): Promise<DeliveryView[]> => {
        const found: DeliveryView[] = (await rpc.request(NOTIFIER_SUBJECTS.listDeliveries, { task_id: task })).deliveries;
        expect(found.map((delivery) => delivery.status)).toEqual(['dead', 'dead']);
        return found;
      }, 15000);
      for (const delivery of deliveries) {
        expect(delivery).toMatchObject({ attempts: 1, last_status_code: null, last_error: expect.stringMatching(/^refused: /) });
      }
      expect(sink.requests).toHaveLength(0);
    },
    30000,
  );
});
