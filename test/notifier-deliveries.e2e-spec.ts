import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { NOTIFIER_SUBJECTS, type DeliveryView, type ListDeliveriesReply, type TaskEvent } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { generateNotifierSealingKeyPair, generateWebhookSecret, NotifierSealer } from '@app/secrets';
import { eventually } from './support/eventually';
import { AgentEvents, uniqueHandle, verifyStandardWebhook, type TestAgent } from './support/notifier-helpers';
import { OutboxWriter, taskEvent } from './support/outbox-writer';
import { RelayHarness, TEST_ADMIN_TOKEN, TEST_NOTIFIER_PUBLIC_KEY } from './support/relay-harness';
import { WebhookSink, type SinkRequest } from './support/webhook-sink';

interface WebhookBody {
  type: string;
  timestamp: string;
  data: TaskEvent;
}

const bodyOf = (request: SinkRequest): WebhookBody => JSON.parse(request.body) as WebhookBody;

describe('notifier: webhooks, Slack and the delivery log', () => {
  const notifierSealer = new NotifierSealer(TEST_NOTIFIER_PUBLIC_KEY);
  let relay: RelayHarness;
  let sink: WebhookSink;
  let outbox: OutboxWriter;
  let agents: AgentEvents;
  let rpc: NatsRpcClient;

  async function deliveriesOf(taskId: string): Promise<DeliveryView[]> {
    return (await rpc.request(NOTIFIER_SUBJECTS.listDeliveries, { task_id: taskId, limit: 100 })).deliveries;
  }

  async function pair(
    label: string,
  ): Promise<{ sender: TestAgent; recipient: TestAgent; paths: Record<'sender' | 'recipient' | 'senderSlack' | 'recipientSlack', string> }> {
    const senderHandle = uniqueHandle(`${label}-s`);
    const recipientHandle = uniqueHandle(`${label}-r`);
    const paths = {
      sender: `/${senderHandle}/hook`,
      recipient: `/${recipientHandle}/hook`,
      senderSlack: `/${senderHandle}/slack`,
      recipientSlack: `/${recipientHandle}/slack`,
    };
    const sender = await agents.register(senderHandle, { webhook: sink.url(paths.sender), slack: sink.url(paths.senderSlack) });
    const recipient = await agents.register(recipientHandle, { webhook: sink.url(paths.recipient), slack: sink.url(paths.recipientSlack) });
    return { sender, recipient, paths };
  }

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({
      env: {
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms',
        RELAY_WEBHOOK_TIMEOUT_MS: '1000',
        RELAY_THREAD_URL_TEMPLATE: 'https://ui.acme.test/threads/{task_id}',
        RELAY_SLACK_MIN_INTERVAL_MS: '500',
      },
    });
    outbox = await OutboxWriter.connect();
    agents = await AgentEvents.open(relay);
    rpc = relay.edge.get(NatsRpcClient);
  });

  afterAll(async () => {
    await agents?.close();
    await relay?.stop();
    await outbox?.end();
    await sink?.stop();
  });

  it('stores a webhook secret only sealed to its key and shaped whsec_ + base64 of 24 to 64 bytes', async () => {
    const handle = uniqueHandle('rot');
    const rotate = (sealed: string) => rpc.request(NOTIFIER_SUBJECTS.rotateWebhookSecret, { handle, sealed_webhook_secret: sealed });
    const refused = { reason: 'invalid_params', data: { field: 'sealed_webhook_secret' } };
    await expect(rotate(await notifierSealer.seal(generateWebhookSecret()))).resolves.toEqual({ stored: true });
    await expect(rotate(generateWebhookSecret())).rejects.toMatchObject(refused);
    await expect(rotate(await new NotifierSealer(generateNotifierSealingKeyPair('other').publicKey).seal(generateWebhookSecret()))).rejects.toMatchObject(
      refused,
    );
    await expect(rotate(await notifierSealer.seal('whsec_c2hvcnQ='))).rejects.toMatchObject(refused);
    // The notifier holds a request to its contract's shape; the handle's value was checked where it entered.
    await expect(rpc.request(NOTIFIER_SUBJECTS.rotateWebhookSecret, { handle: 42 } as never)).rejects.toMatchObject({
      reason: 'invalid_params',
      data: { field: 'handle' },
    });
  });

  it('delivers every event type to the right party once, signed, and Slack for new handoffs and completions', async () => {
    const { sender, recipient, paths } = await pair('life');
    const s = sender.handle;
    const r = recipient.handle;
    const done = `task-${randomUUID()}`;
    const rejected = `task-${randomUUID()}`;
    const failed = `task-${randomUUID()}`;
    const canceled = `task-${randomUUID()}`;
    const p = { sender: s, recipient: r };
    await outbox.write([
      taskEvent(done, 'created', { ...p, sequenceNo: 1 }),
      taskEvent(done, 'accepted', p),
      taskEvent(done, 'message_appended', { ...p, sequenceNo: 2, author: r, body: 'Which test?' }),
      taskEvent(done, 'input_required', p),
      taskEvent(done, 'message_appended', { ...p, sequenceNo: 3, author: s, body: 'The login one' }),
      taskEvent(done, 'completed', p),
      taskEvent(rejected, 'created', { ...p, sequenceNo: 1 }),
      taskEvent(rejected, 'rejected', p),
      taskEvent(failed, 'created', { ...p, sequenceNo: 1 }),
      taskEvent(failed, 'accepted', p),
      taskEvent(failed, 'failed', p),
      taskEvent(canceled, 'created', { ...p, sequenceNo: 1 }),
      taskEvent(canceled, 'canceled', p),
    ]);

    const toRecipient = ['a2a.task.created', 'a2a.task.message', 'a2a.task.created', 'a2a.task.created', 'a2a.task.created', 'a2a.task.canceled'];
    const toSender = [
      'a2a.task.accepted',
      'a2a.task.message',
      'a2a.task.input_required',
      'a2a.task.completed',
      'a2a.task.rejected',
      'a2a.task.accepted',
      'a2a.task.failed',
    ];
    await eventually(
      () =>
        expect({
          recipient: sink.to(paths.recipient).length,
          sender: sink.to(paths.sender).length,
          recipientSlack: sink.to(paths.recipientSlack).length,
          senderSlack: sink.to(paths.senderSlack).length,
        }).toEqual({ recipient: toRecipient.length, sender: toSender.length, recipientSlack: 4, senderSlack: 1 }),
      20000,
    );
    const received = (path: string): string[] => sink.to(path).map((request) => bodyOf(request).type);
    expect(received(paths.recipient).sort()).toEqual([...toRecipient].sort());
    expect(received(paths.sender).sort()).toEqual([...toSender].sort());

    for (const [path, agent] of [
      [paths.recipient, recipient],
      [paths.sender, sender],
    ] as const) {
      const requests = sink.to(path);
      for (const request of requests) {
        expect(verifyStandardWebhook(request, agent.webhookSecret)).toBe(true);
        expect(verifyStandardWebhook(request, sender === agent ? recipient.webhookSecret : sender.webhookSecret)).toBe(false);
        expect(request.headers['content-type']).toBe('application/json');
        const body = bodyOf(request);
        expect(body.data.schema_version).toBe(1);
        expect([body.data.sender, body.data.recipient]).toEqual([s, r]);
      }
      const ids = requests.map((request) => request.headers['webhook-id']);
      expect(new Set(ids).size).toBe(ids.length);
    }
    const messageToSender = sink
      .to(paths.sender)
      .map(bodyOf)
      .find((body) => body.type === 'a2a.task.message')!;
    expect(messageToSender.data.task.latest_message?.from).toBe(r);
    const messageToRecipient = sink
      .to(paths.recipient)
      .map(bodyOf)
      .find((body) => body.type === 'a2a.task.message')!;
    expect(messageToRecipient.data.task.latest_message?.from).toBe(s);

    const slack = JSON.parse(sink.to(paths.senderSlack)[0].body) as {
      text: string;
      blocks: Array<{ type: string; text?: { text: string }; elements?: Array<{ text: string }> }>;
    };
    expect(slack.text).toContain(`${r} completed the handoff from ${s}`);
    expect(slack.blocks[0].type).toBe('section');
    expect(slack.blocks[1].elements?.[0].text).toContain(`/threads/${done}|Open the thread>`);
    expect(sink.to(paths.senderSlack)[0].headers['webhook-signature']).toBeUndefined();
    const newTask = JSON.parse(sink.to(paths.recipientSlack)[0].body) as { text: string };
    expect(newTask.text).toContain(`New handoff from ${s} to ${r}`);

    const recorded = await deliveriesOf(done);
    expect(recorded.length).toBe(8);
    expect(recorded.every((delivery) => delivery.status === 'succeeded' && delivery.attempts === 1)).toBe(true);
    expect(recorded.every((delivery) => !('url' in delivery) && delivery.target_host.startsWith('http://127.0.0.1:'))).toBe(true);
  }, 40000);

  it('spaces Slack posts to one webhook by the per-webhook rate, across notifier replicas', async () => {
    // From here on the relay runs two notifiers.
    await relay.startService('notifier');
    const { paths, sender, recipient } = await pair('slackrate');
    const p = { sender: sender.handle, recipient: recipient.handle };
    await outbox.write([1, 2, 3, 4].map(() => taskEvent(`task-${randomUUID()}`, 'created', { ...p, sequenceNo: 1 })));
    await eventually(
      () =>
        expect({ recipientSlack: sink.to(paths.recipientSlack).length, recipient: sink.to(paths.recipient).length }).toEqual({
          recipientSlack: 4,
          recipient: 4,
        }),
      15000,
    );
    const times = sink.to(paths.recipientSlack).map((request) => request.receivedAt);
    for (let index = 1; index < times.length; index++) expect(times[index] - times[index - 1]).toBeGreaterThanOrEqual(300);
  }, 30000);

  it('retries a receiver that answers 500 then 200, and records both attempts', async () => {
    const { paths, sender, recipient } = await pair('flaky');
    sink.plan(paths.recipient, [{ status: 500 }, { status: 200 }]);
    const task = `task-${randomUUID()}`;
    await outbox.write([taskEvent(task, 'created', { sender: sender.handle, recipient: recipient.handle, sequenceNo: 1 })]);
    await eventually(async () => expect(await deliveriesOf(task)).toContainEqual(expect.objectContaining({ channel: 'webhook', status: 'succeeded' })), 15000);
    const requests = sink.to(paths.recipient);
    expect(requests.map((request) => request.status)).toEqual([500, 200]);
    expect(requests[0].headers['webhook-id']).toBe(requests[1].headers['webhook-id']);
    expect(verifyStandardWebhook(requests[1], recipient.webhookSecret)).toBe(true);
    const delivery = (await deliveriesOf(task)).find((entry) => entry.channel === 'webhook')!;
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 2, last_status_code: 200, last_error: null, event: 'a2a.task.created' });
    expect(delivery.id).toBe(requests[0].headers['webhook-id']);
    const detail = await request(relay.url).get(`/admin/deliveries/${delivery.id}`).set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`).expect(200);
    expect(detail.body.attempt_log).toEqual([
      { attempt_no: 1, status_code: 500, error: 'HTTP 500', duration_ms: expect.any(Number), attempted_at: expect.any(String) },
      { attempt_no: 2, status_code: 200, error: null, duration_ms: expect.any(Number), attempted_at: expect.any(String) },
    ]);
    await request(relay.url).get(`/admin/deliveries/${delivery.id}`).expect(401);
  }, 30000);

  it('honours Retry-After on a 429', async () => {
    const { paths, sender, recipient } = await pair('busy');
    sink.plan(paths.recipient, [{ status: 429, headers: { 'retry-after': '1' } }, { status: 200 }]);
    const task = `task-${randomUUID()}`;
    await outbox.write([taskEvent(task, 'created', { sender: sender.handle, recipient: recipient.handle, sequenceNo: 1 })]);
    await eventually(() => expect(sink.to(paths.recipient).length).toBe(2), 15000);
    const [first, second] = sink.to(paths.recipient);
    expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(950);
  }, 30000);

  it('retries a receiver that times out', async () => {
    const { paths, sender, recipient } = await pair('slow');
    sink.plan(paths.recipient, [{ status: 200, delayMs: 1500 }, { status: 200 }]);
    const task = `task-${randomUUID()}`;
    await outbox.write([taskEvent(task, 'created', { sender: sender.handle, recipient: recipient.handle, sequenceNo: 1 })]);
    await eventually(async () => expect(await deliveriesOf(task)).toContainEqual(expect.objectContaining({ channel: 'webhook', status: 'succeeded' })), 15000);
    expect(sink.to(paths.recipient).length).toBe(2);
    const attempts = await outbox.db.query(
      'SELECT a.status_code, a.error FROM "notifier"."delivery_attempts" a JOIN "notifier"."deliveries" d ON d.id = a.delivery_id WHERE d.task_id = $1 AND d.channel = $2 ORDER BY a.attempt_no',
      [task, 'webhook'],
    );
    expect(attempts.rows[0]).toMatchObject({ status_code: null, error: expect.stringContaining('timed out') });
    expect(attempts.rows[1]).toMatchObject({ status_code: 200, error: null });
  }, 30000);

  it('does not follow redirects', async () => {
    const { paths, sender, recipient } = await pair('redirect');
    sink.plan(paths.recipient, [{ status: 302, headers: { location: sink.url('/elsewhere') } }]);
    const task = `task-${randomUUID()}`;
    await outbox.write([taskEvent(task, 'created', { sender: sender.handle, recipient: recipient.handle, sequenceNo: 1 })]);
    await eventually(async () => expect(await deliveriesOf(task)).toContainEqual(expect.objectContaining({ channel: 'webhook', status: 'dead' })), 15000);
    expect(sink.to('/elsewhere')).toHaveLength(0);
    const delivery = (await deliveriesOf(task)).find((entry) => entry.channel === 'webhook')!;
    expect(delivery).toMatchObject({ attempts: 1, last_status_code: 302 });
  }, 30000);

  it('turns a receiver that always fails into a dead letter after the schedule, and redelivers it on request', async () => {
    const { paths, sender, recipient } = await pair('down');
    sink.plan(paths.recipient, [{ status: 503 }]);
    const task = `task-${randomUUID()}`;
    await outbox.write([taskEvent(task, 'created', { sender: sender.handle, recipient: recipient.handle, sequenceNo: 1 })]);
    await eventually(async () => expect(await deliveriesOf(task)).toContainEqual(expect.objectContaining({ channel: 'webhook', status: 'dead' })), 15000);
    expect(sink.to(paths.recipient)).toHaveLength(4);
    await request(relay.url).get('/admin/deliveries?status=dead').expect(401);
    await request(relay.url).get('/admin/deliveries?status=nope').set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`).expect(400);
    const listed = await request(relay.url).get('/admin/deliveries?status=dead&limit=500').set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`).expect(200);
    const deadLetters = (listed.body as ListDeliveriesReply).deliveries;
    expect(deadLetters.every((entry) => entry.status === 'dead')).toBe(true);
    const dead = deadLetters.find((entry) => entry.task_id === task)!;
    expect(dead).toMatchObject({
      status: 'dead',
      attempts: 4,
      last_status_code: 503,
      last_error: 'HTTP 503',
      next_attempt_at: null,
      target_handle: recipient.handle,
    });

    sink.plan(paths.recipient, [{ status: 204 }]);
    await request(relay.url).post(`/admin/deliveries/${dead.id}/redeliver`).expect(401);
    const redelivered = await request(relay.url).post(`/admin/deliveries/${dead.id}/redeliver`).set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`).expect(202);
    expect(redelivered.body).toMatchObject({ id: dead.id, status: 'pending' });
    await eventually(async () => expect(await deliveriesOf(task)).toContainEqual(expect.objectContaining({ id: dead.id, status: 'succeeded' })), 15000);
    const requests = sink.to(paths.recipient);
    expect(requests).toHaveLength(5);
    expect(new Set(requests.map((request) => request.headers['webhook-id']))).toEqual(new Set([dead.id]));
    expect(verifyStandardWebhook(requests[4], recipient.webhookSecret)).toBe(true);
    const missing = await request(relay.url).post(`/admin/deliveries/${randomUUID()}/redeliver`).set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`).expect(404);
    expect(missing.body.error.reason).toBe('delivery_not_found');
    await request(relay.url).post('/admin/deliveries/not-a-uuid/redeliver').set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`).expect(404);
  }, 30000);

  it('signs with the rotated secret after a rotation', async () => {
    const { paths, sender, recipient } = await pair('rotated');
    const rotated = generateWebhookSecret();
    await rpc.request(NOTIFIER_SUBJECTS.rotateWebhookSecret, { handle: recipient.handle, sealed_webhook_secret: await notifierSealer.seal(rotated) });
    const task = `task-${randomUUID()}`;
    await outbox.write([taskEvent(task, 'created', { sender: sender.handle, recipient: recipient.handle, sequenceNo: 1 })]);
    await eventually(() => expect(sink.to(paths.recipient).length).toBe(1), 15000);
    expect(verifyStandardWebhook(sink.to(paths.recipient)[0], rotated)).toBe(true);
    expect(verifyStandardWebhook(sink.to(paths.recipient)[0], recipient.webhookSecret)).toBe(false);
  }, 30000);

  it('keeps targets current from agent events: a disabled agent or a removed URL gets nothing, an older event changes nothing', async () => {
    const { paths, sender, recipient } = await pair('targets');
    const p = { sender: sender.handle, recipient: recipient.handle };
    const older = new Date(Date.now() - 60_000).toISOString();
    await agents.publish({ agent_id: recipient.agentId, handle: recipient.handle, notification_webhook_url: null, slack_webhook_url: null, disabled: true });
    await agents.publish({
      agent_id: recipient.agentId,
      handle: recipient.handle,
      notification_webhook_url: sink.url(paths.recipient),
      slack_webhook_url: null,
      occurred_at: older,
    });
    const ignored = `task-${randomUUID()}`;
    await outbox.write([taskEvent(ignored, 'created', { ...p, sequenceNo: 1 })]);
    // Events reach the stream in this order: the disabled agent's handoff before its re-enabling.
    await eventually(async () => expect(await outbox.unpublishedCount()).toBe(0));
    await agents.publish({
      agent_id: recipient.agentId,
      handle: recipient.handle,
      notification_webhook_url: sink.url(paths.recipient),
      slack_webhook_url: null,
    });
    const seen = `task-${randomUUID()}`;
    await outbox.write([taskEvent(seen, 'created', { ...p, sequenceNo: 1 })]);
    await eventually(() => expect(sink.to(paths.recipient).length).toBe(1), 15000);
    expect(bodyOf(sink.to(paths.recipient)[0]).data.task_id).toBe(seen);
    expect(await deliveriesOf(ignored)).toEqual([]);
    expect(sink.to(paths.recipientSlack)).toHaveLength(0);
  }, 30000);
});
