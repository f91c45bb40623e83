import request from 'supertest';
import { registerAgent, uniqueHandle } from './support/agents';
import { eventually } from './support/eventually';
import { createTask } from './support/tasks';
import { verifyStandardWebhook } from './support/notifier-helpers';
import { ServiceProcess } from './support/process/service-process';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { WebhookSink } from './support/webhook-sink';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

/**
 * Issue 10 item 5: the delivery log counts every request a receiver got. A notifier process is
 * SIGKILLed while its request is at the receiver; the next one sends it again.
 */
describe('delivery log: an attempt is recorded before its request is sent', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  const processes: ServiceProcess[] = [];

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({ env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_WEBHOOK_TIMEOUT_MS: '3000' } });
  });

  afterAll(async () => {
    for (const started of processes) await started.kill();
    await relay?.stop();
    await sink?.stop();
  });

  it('shows two attempts for a webhook that arrived twice because the first sender died', async () => {
    const sender = await registerAgent(relay, { handle: uniqueHandle('twice-s', 'acme'), name: 'Sender' });
    const handle = uniqueHandle('twice-r', 'acme');
    const path = `/${handle}/hook`;
    const recipient = await registerAgent(relay, { handle, name: 'Recipient', notification_webhook_url: sink.url(path) });
    await relay.stopService('notifier');
    const notifier = await ServiceProcess.start(relay, 'notifier');
    processes.push(notifier);

    // The first request reaches the receiver, which answers only after the sender is gone.
    sink.plan(path, [{ status: 200, delayMs: 20000 }, { status: 200 }]);
    const task = await createTask(relay.url, sender, recipient);
    await eventually(() => sink.to(path).length === 1, 20000);
    await notifier.kill();
    await relay.startService('notifier');

    const listed = async (): Promise<Array<{ id: string; status: string; attempts: number }>> =>
      (
        await request(relay.url)
          .get(`/admin/deliveries?task_id=${encodeURIComponent(task)}`)
          .set(admin)
          .expect(200)
      ).body.deliveries;
    await eventually(async () => (await listed()).some((delivery) => delivery.status === 'succeeded'), 30000);
    const requests = sink.to(path);
    expect(requests).toHaveLength(2);
    expect(requests[1].headers['webhook-id']).toBe(requests[0].headers['webhook-id']);
    for (const webhook of requests) expect(verifyStandardWebhook(webhook, recipient.webhook_secret as string)).toBe(true);

    const [delivery] = await listed();
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 2 });
    const detail = await request(relay.url).get(`/admin/deliveries/${delivery.id}`).set(admin).expect(200);
    expect(detail.body.attempt_log).toEqual([
      { attempt_no: 1, status_code: null, error: expect.stringMatching(/^interrupted/), duration_ms: null, attempted_at: expect.any(String) },
      { attempt_no: 2, status_code: 200, error: null, duration_ms: expect.any(Number), attempted_at: expect.any(String) },
    ]);
  }, 90000);
});
