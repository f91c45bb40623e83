import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { a2aV1, type Json } from './support/json-rpc';
import { RelayHarness } from './support/relay-harness';
import { WebhookSink } from './support/webhook-sink';

/**
 * The two participants of a task each have their own push-notification configs: their own quota
 * of 10 and their own id space, so neither can use up the other's slots or learn the other's ids,
 * and configs of both with the same id are each delivered to.
 */
describe('push-notification configs per owner', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let sequence = 0;

  const v1 = (agent: RegisteredTestAgent, method: string, params: unknown, path?: string): Promise<Json> =>
    a2aV1(relay.url, agent.api_key, method, params, path);

  async function newTask(): Promise<string> {
    const response = await request(relay.url)
      .post(`/a2a/${bob.agent.handle}`)
      .set('x-api-key', alice.api_key)
      .set('a2a-version', '1.0')
      .send({
        jsonrpc: '2.0',
        id: ++sequence,
        method: 'SendMessage',
        params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'push' }] }, configuration: { returnImmediately: true } },
      });
    if (!response.body.result) throw new Error(JSON.stringify(response.body));
    return response.body.result.task.id as string;
  }

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({ env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms' } });
    const org = `owners${randomUUID().slice(0, 6)}`;
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
  });

  afterAll(async () => {
    await relay?.stop();
    await sink?.stop();
  });

  it('the other party filling its 10 slots leaves yours free', async () => {
    const taskId = await newTask();
    for (let index = 0; index < 10; index++) {
      expect((await v1(bob, 'CreateTaskPushNotificationConfig', { taskId, id: `bob-${index}`, url: sink.url(`/bob-${index}`) })).error).toBeUndefined();
    }
    const eleventh = await v1(bob, 'CreateTaskPushNotificationConfig', { taskId, id: 'bob-10', url: sink.url('/bob-10') });
    expect(eleventh.error).toMatchObject({ code: -32602, data: [{ metadata: { relay_reason: 'push_config_limit' } }] });

    const mine = await v1(alice, 'CreateTaskPushNotificationConfig', { taskId, id: 'alice-1', url: sink.url('/alice-1') });
    expect(mine.error).toBeUndefined();
    expect(mine.result).toMatchObject({ id: 'alice-1', taskId });
    expect((await v1(alice, 'ListTaskPushNotificationConfigs', { taskId })).result.configs.map((config: Json) => config.id)).toEqual(['alice-1']);
  });

  it('ids are per owner: using the other party’s id neither fails nor touches its config, and both are delivered to', async () => {
    const taskId = await newTask();
    expect((await v1(alice, 'CreateTaskPushNotificationConfig', { taskId, id: 'shared', url: sink.url(`/${taskId}/alice`) })).error).toBeUndefined();

    // Bob probing Alice's id learns nothing: his own config with that id is simply created.
    const probe = await v1(bob, 'CreateTaskPushNotificationConfig', { taskId, id: 'shared', url: sink.url(`/${taskId}/bob`) });
    expect(probe.error).toBeUndefined();
    expect(probe.result).toMatchObject({ id: 'shared', url: sink.url(`/${taskId}/bob`) });
    expect((await v1(alice, 'GetTaskPushNotificationConfig', { taskId, id: 'shared' })).result.url).toBe(sink.url(`/${taskId}/alice`));
    expect((await v1(bob, 'GetTaskPushNotificationConfig', { taskId, id: 'shared' })).result.url).toBe(sink.url(`/${taskId}/bob`));

    // An event of the task reaches both configs named "shared".
    expect((await v1(alice, 'CancelTask', { id: taskId })).error).toBeUndefined();
    await eventually(() => sink.to(`/${taskId}/alice`).length >= 1 && sink.to(`/${taskId}/bob`).length >= 1, 30000);

    // Deleting one owner's config leaves the other's.
    expect((await v1(bob, 'DeleteTaskPushNotificationConfig', { taskId, id: 'shared' })).error).toBeUndefined();
    expect((await v1(alice, 'GetTaskPushNotificationConfig', { taskId, id: 'shared' })).result.url).toBe(sink.url(`/${taskId}/alice`));
    expect((await v1(bob, 'GetTaskPushNotificationConfig', { taskId, id: 'shared' })).error).toMatchObject({ code: -32001 });
  }, 60000);
});
