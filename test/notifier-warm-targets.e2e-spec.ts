import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { NOTIFIER_SUBJECTS, prefixedSubject, PUSH_CONFIG_EVENTS, type DeliveryView, type PushConfigEvent } from '@app/contracts';
import { eventStreamName, NatsRpcClient, openJetStream, publishWithMsgId } from '@app/messaging';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { a2aV1, type Json } from './support/json-rpc';
import { ServiceProcess } from './support/process/service-process';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { createTask } from './support/tasks';
import { testNatsUrl } from './support/test-env';
import { WebhookSink, type SinkRequest } from './support/webhook-sink';

const taskIdOf = (request: SinkRequest): string => (JSON.parse(request.body) as { data: { task_id: string } }).data.task_id;

/** Push-config events put on the stream ahead of the last case: what each restarted replica's feed reads again before it gets to new ones. */
const BACKLOG = Number(process.env.RELAY_WARM_TARGETS_BACKLOG || 1500);
/** Tasks of the last case: each has its config set and is canceled, all at once. */
const TRIALS = 8;

/**
 * The notifier decides from memory that most events need no delivery. That memory must follow
 * every change: with two notifier replicas (one in the harness, one a process of its own) that
 * have both consumed events of these agents and held that they need nothing, a webhook set
 * through the admin API and a push config set through the A2A API are delivered for the very
 * next event, and a webhook removed is not. A replica learns push configs through a feed of its
 * own; the last case restarts both replicas behind a backlog of push-config events, so that each
 * feed is far behind the durable consumer, and the next event of each task still gets its push.
 */
describe('notifier: targets held in memory follow every change', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let replica: ServiceProcess;
  let rpc: NatsRpcClient;
  let sender: RegisteredTestAgent;
  let recipient: RegisteredTestAgent;
  let marker: RegisteredTestAgent;
  const markerPath = `/marker/${randomUUID()}`;

  /**
   * Waits until the notifier replicas have handled every event published so far: a task to an
   * agent with a webhook is published after them (one outbox, in order); once it is delivered, an
   * empty consumer means the earlier events are acknowledged too, so their deliveries are recorded.
   */
  async function settled(timeoutMs = 30000): Promise<void> {
    const markerTask = await createTask(relay.url, sender, marker);
    await eventually(() => sink.to(markerPath).some((delivered) => taskIdOf(delivered) === markerTask), timeoutMs);
    const jetStream = await openJetStream({ url: testNatsUrl(), name: 'test-warm-targets-pending' });
    try {
      await eventually(async () => {
        const info = await jetStream.jsm.consumers.info(eventStreamName(relay.subjectPrefix), 'notifier');
        return info.num_pending + info.num_ack_pending === 0;
      }, 60000);
    } finally {
      await jetStream.connection.close();
    }
  }

  /** Push-config events of configs set and deleted since on `taskId` (the tasks service holds none of them), straight onto the stream. */
  async function publishPushConfigBacklog(taskId: string, owner: string, count: number): Promise<void> {
    const jetStream = await openJetStream({ url: testNatsUrl(), name: 'test-warm-targets-backlog' });
    try {
      const subject = prefixedSubject(relay.subjectPrefix, PUSH_CONFIG_EVENTS.set);
      for (let start = 0; start < count; start += 200) {
        const chunk = Array.from({ length: Math.min(200, count - start) }, (_, i): PushConfigEvent => ({
          event_id: randomUUID(),
          task_id: taskId,
          config_id: `gone-${start + i}`,
          owner,
          version: '1.0',
          url: sink.url('/gone'),
          deleted: false,
          occurred_at: new Date().toISOString(),
        }));
        await Promise.all(chunk.map((event) => publishWithMsgId(jetStream.js, subject, event, event.event_id)));
      }
    } finally {
      await jetStream.connection.close();
    }
  }

  async function deliveriesOf(taskId: string): Promise<DeliveryView[]> {
    return (await rpc.request(NOTIFIER_SUBJECTS.listDeliveries, { task_id: taskId, limit: 100 })).deliveries;
  }

  async function setWebhook(agent: RegisteredTestAgent, url: string | null): Promise<void> {
    const response = await request(relay.url)
      .patch(`/admin/agents/${encodeURIComponent(agent.agent.handle)}`)
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send({ notification_webhook_url: url });
    expect(response.status).toBe(200);
  }

  const v1 = (agent: RegisteredTestAgent, method: string, params: unknown, path?: string): Promise<Json> =>
    a2aV1(relay.url, agent.api_key, method, params, path);

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({ env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms' } });
    replica = await ServiceProcess.start(relay, 'notifier');
    rpc = relay.edge.get(NatsRpcClient);
    const org = `warm${randomUUID().slice(0, 6)}`;
    sender = await registerAgent(relay, { handle: uniqueHandle('warm-s', org), name: 'Sender' });
    recipient = await registerAgent(relay, { handle: uniqueHandle('warm-r', org), name: 'Recipient' });
    marker = await registerAgent(relay, { handle: uniqueHandle('warm-m', org), name: 'Marker', notification_webhook_url: sink.url(markerPath) });
    // Warm: both replicas consume events of these agents and hold that they need no delivery.
    const warmTasks: string[] = [];
    for (let i = 0; i < 12; i++) warmTasks.push(await createTask(relay.url, sender, recipient));
    await settled();
    for (const taskId of warmTasks) expect(await deliveriesOf(taskId)).toEqual([]);
  }, 120000);

  afterAll(async () => {
    await replica?.kill();
    await relay?.stop();
    await sink?.stop();
  });

  it('delivers the very next event to a webhook set through the admin API, and nothing once it is removed', async () => {
    const path = `/warm/${randomUUID()}`;
    await setWebhook(recipient, sink.url(path));
    const first = await createTask(relay.url, sender, recipient);
    await eventually(() => sink.to(path).some((delivered) => taskIdOf(delivered) === first), 30000);
    expect(sink.to(path).map(taskIdOf)).toEqual([first]);

    await setWebhook(recipient, null);
    const afterRemoval = await createTask(relay.url, sender, recipient);
    await settled();
    expect(await deliveriesOf(afterRemoval)).toEqual([]);
    expect(sink.to(path).map(taskIdOf)).toEqual([first]);
  }, 120000);

  it('delivers the very next event of a task to a push config set on it', async () => {
    const taskId = await createTask(relay.url, sender, recipient);
    await settled();
    const path = `/warm-push/${taskId}`;
    const token = `token-${randomUUID()}`;
    const set = await v1(sender, 'CreateTaskPushNotificationConfig', { taskId, id: 'warm', url: sink.url(path), token });
    expect(set.error).toBeUndefined();
    expect((await v1(sender, 'CancelTask', { id: taskId })).error).toBeUndefined();
    await eventually(() => sink.to(path).length >= 1, 30000);
    const [pushed] = sink.to(path);
    expect(pushed.headers['x-a2a-notification-token']).toBe(token);
    expect((JSON.parse(pushed.body) as Json).statusUpdate.status.state).toBe('TASK_STATE_CANCELED');
  }, 120000);

  it('delivers the very next event of each task to the push config set on it while the replicas are still reading older push-config events', async () => {
    const tasks: string[] = [];
    for (let i = 0; i < TRIALS; i++) tasks.push(await createTask(relay.url, sender, recipient));
    await publishPushConfigBacklog(tasks[0], sender.agent.handle, BACKLOG);
    await settled(180000);
    // Both replicas start again: each feed reads the stream from its start, the backlog first, while
    // the durable consumer has nothing pending and hands over new events at once. The process starts
    // first (it takes longest), so that both feeds are still early in the backlog when the configs are set.
    await replica.kill();
    await relay.stopService('notifier');
    replica = await ServiceProcess.start(relay, 'notifier');
    await relay.startService('notifier');

    const tokens = new Map(tasks.map((taskId) => [taskId, `token-${randomUUID()}`]));
    await Promise.all(
      tasks.map(async (taskId) => {
        const set = await v1(sender, 'CreateTaskPushNotificationConfig', {
          taskId,
          id: 'warm',
          url: sink.url(`/warm-push/${taskId}`),
          token: tokens.get(taskId),
        });
        expect(set.error).toBeUndefined();
        expect((await v1(sender, 'CancelTask', { id: taskId })).error).toBeUndefined();
      }),
    );
    await eventually(() => expect(tasks.filter((taskId) => sink.to(`/warm-push/${taskId}`).length === 0)).toEqual([]), 120000);
    await settled();
    for (const taskId of tasks) {
      const pushed = sink.to(`/warm-push/${taskId}`);
      expect(pushed).toHaveLength(1);
      expect(pushed[0].headers['x-a2a-notification-token']).toBe(tokens.get(taskId));
      expect((JSON.parse(pushed[0].body) as Json).statusUpdate.status.state).toBe('TASK_STATE_CANCELED');
    }
  }, 240000);
});
