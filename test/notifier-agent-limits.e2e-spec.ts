import request from 'supertest';
import { PUSH_CONFIG_SUBJECTS, type ParticipantRef } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { expectRpcError, ok, rpc, type Json } from './support/json-rpc';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { createTask } from './support/tasks';
import { WebhookSink } from './support/webhook-sink';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

function ref(agent: RegisteredTestAgent): ParticipantRef {
  return { id: agent.agent.id, handle: agent.agent.handle, name: agent.agent.name, role: agent.agent.role ?? null };
}

describe('per-agent limits of deliveries: push configs across tasks, and the agent’s own request timeout', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let rpcClient: NatsRpcClient;

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({
      // One attempt each within the test: a timed-out delivery is not retried before it ends.
      env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_WEBHOOK_TIMEOUT_MS: '3000', RELAY_WEBHOOK_RETRY_SCHEDULE: '1h' },
    });
    rpcClient = relay.edge.get(NatsRpcClient);
  });

  afterAll(async () => {
    await relay?.stop();
    await sink?.stop();
  });

  async function deliveriesOf(taskId: string): Promise<Json[]> {
    return (
      await request(relay.url)
        .get(`/admin/deliveries?task_id=${encodeURIComponent(taskId)}`)
        .set(admin)
        .expect(200)
    ).body.deliveries as Json[];
  }

  async function attemptLog(deliveryId: string): Promise<Json[]> {
    return (await request(relay.url).get(`/admin/deliveries/${deliveryId}`).set(admin).expect(200)).body.attempt_log as Json[];
  }

  it('refuses an agent’s 101st push config across its tasks in both A2A versions, naming the limit, and stores nothing', async () => {
    const owner = await registerAgent(relay, { handle: uniqueHandle('many-configs', 'acme'), name: 'Many configs' });
    const peer = await registerAgent(relay, { handle: uniqueHandle('peer', 'acme'), name: 'Peer' });
    const tasks: string[] = [];
    for (let task = 0; task < 10; task++) {
      const taskId = await createTask(relay.url, owner, peer, `Task ${task}`);
      tasks.push(taskId);
      for (let config = 0; config < 10; config++) {
        await rpcClient.request(PUSH_CONFIG_SUBJECTS.set, {
          caller: ref(owner),
          task_id: taskId,
          version: '1.0',
          config: { id: `c${config}`, url: sink.url(`/configs/${task}/${config}`) },
        });
      }
    }
    const eleventhTask = await createTask(relay.url, owner, peer, 'One task too many');

    const v1 = await rpc(
      relay.url,
      owner.api_key,
      'CreateTaskPushNotificationConfig',
      { taskId: eleventhTask, id: 'one-more', url: sink.url('/one-more') },
      { headers: { 'a2a-version': '1.0' } },
    );
    expectRpcError(v1.body.error, { code: -32602, reason: 'push_config_limit', shape: 'error-info' });
    expect(v1.body.error?.message).toBe('You hold at most 100 push notification configs across your tasks');
    expect((v1.body.error?.data as Json[])[0].metadata).toMatchObject({ scope: 'agent', limit: '100' });

    const v03 = await rpc(relay.url, owner.api_key, 'tasks/pushNotificationConfig/set', {
      taskId: eleventhTask,
      pushNotificationConfig: { id: 'one-more', url: sink.url('/one-more') },
    });
    expectRpcError(v03.body.error, { code: -32602, reason: 'push_config_limit', shape: 'data' });
    expect(v03.body.error?.data).toMatchObject({ scope: 'agent', limit: 100 });

    const listed = await rpc(relay.url, owner.api_key, 'ListTaskPushNotificationConfigs', { taskId: eleventhTask }, { headers: { 'a2a-version': '1.0' } });
    expect(listed.body.result?.configs).toEqual([]);
    // Replacing one of its configs adds none: allowed at the limit. The other party's quota is its own.
    const replaced = await rpcClient.request(PUSH_CONFIG_SUBJECTS.set, {
      caller: ref(owner),
      task_id: tasks[0],
      version: '1.0',
      config: { id: 'c0', url: sink.url('/replaced') },
    });
    expect(replaced.url).toBe(sink.url('/replaced'));
    const peers = await rpcClient.request(PUSH_CONFIG_SUBJECTS.set, {
      caller: ref(peer),
      task_id: eleventhTask,
      version: '1.0',
      config: { id: 'mine', url: sink.url('/peer') },
    });
    expect(peers.id).toBe('mine');
  }, 120000);

  it('waits for an agent’s webhook and push receivers as long as its webhook_timeout_ms says, set through the admin API', async () => {
    const sender = await registerAgent(relay, { handle: uniqueHandle('timeout-s', 'acme'), name: 'Sender' });
    const handle = uniqueHandle('timeout-r', 'acme');
    const hook = `/${handle}/hook`;
    const push = `/${handle}/push`;
    sink.plan(hook, [{ status: 200, delayMs: 1500 }]);
    sink.plan(push, [{ status: 200, delayMs: 1500 }]);
    const created = await request(relay.url)
      .post('/admin/agents')
      .set(admin)
      .send({ handle, name: 'Recipient', notification_webhook_url: sink.url(hook), webhook_timeout_ms: 1000 })
      .expect(201);
    expect(created.body.agent.webhook_timeout_ms).toBe(1000);
    const recipient = created.body as RegisteredTestAgent;

    // 1 s: shorter than the receiver takes, though the relay's default (3 s) would have waited.
    const first = await createTask(relay.url, sender, recipient, 'Quick, please');
    await rpcClient.request(PUSH_CONFIG_SUBJECTS.set, { caller: ref(recipient), task_id: first, version: '1.0', config: { id: 'p', url: sink.url(push) } });
    await ok(relay.url, recipient.api_key, 'tasks/update', { task_id: first, transition: 'accept' });
    const timedOut = await eventually(async () => {
      const deliveries = (await deliveriesOf(first)).filter((delivery) => delivery.target_handle === handle);
      expect(deliveries.map((delivery) => [delivery.channel, delivery.status]).sort()).toEqual([
        ['push', 'failed'],
        ['webhook', 'failed'],
      ]);
      return deliveries;
    }, 30000);
    for (const delivery of timedOut)
      expect(await attemptLog(delivery.id)).toMatchObject([{ attempt_no: 1, status_code: null, error: 'timed out after 1000 ms' }]);

    for (const bad of [999, 30001, 1.5, '5000']) {
      const refused = await request(relay.url)
        .patch(`/admin/agents/${encodeURIComponent(handle)}`)
        .set(admin)
        .send({ webhook_timeout_ms: bad });
      expect([refused.status, JSON.stringify(refused.body)]).toEqual([400, expect.stringContaining('webhook_timeout_ms')]);
    }
    const patched = await request(relay.url)
      .patch(`/admin/agents/${encodeURIComponent(handle)}`)
      .set(admin)
      .send({ webhook_timeout_ms: 5000 })
      .expect(200);
    expect(patched.body.webhook_timeout_ms).toBe(5000);
    expect(
      (
        await request(relay.url)
          .get(`/admin/agents/${encodeURIComponent(handle)}`)
          .set(admin)
          .expect(200)
      ).body.webhook_timeout_ms,
    ).toBe(5000);

    const second = await createTask(relay.url, sender, recipient, 'Take your time');
    const delivered = await eventually(async () => {
      const [delivery] = await deliveriesOf(second);
      expect(delivery).toMatchObject({ channel: 'webhook', status: 'succeeded', attempts: 1 });
      return delivery;
    }, 30000);
    expect(await attemptLog(delivered.id)).toMatchObject([{ status_code: 200, error: null, duration_ms: expect.any(Number) }]);

    // null gives the relay's default back.
    const cleared = await request(relay.url)
      .patch(`/admin/agents/${encodeURIComponent(handle)}`)
      .set(admin)
      .send({ webhook_timeout_ms: null })
      .expect(200);
    expect(cleared.body.webhook_timeout_ms).toBeNull();
  }, 120000);
});
