import { PUSH_CONFIG_SUBJECTS, type ParticipantRef } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { createTask } from './support/tasks';
import { ok } from './support/json-rpc';
import { RelayHarness } from './support/relay-harness';
import { WebhookSink, type SinkRequest } from './support/webhook-sink';

const json = (request: SinkRequest): Record<string, any> => JSON.parse(request.body) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function ref(agent: RegisteredTestAgent): ParticipantRef {
  return { id: agent.agent.id, handle: agent.agent.handle, name: agent.agent.name, role: agent.agent.role ?? null };
}

describe('A2A push-notification configs: kept by the tasks service, delivered by the notifier', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let rpc: NatsRpcClient;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;
  let eve: RegisteredTestAgent;

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({ env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms' } });
    rpc = relay.edge.get(NatsRpcClient);
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
    frank = await registerAgent(relay, { handle: uniqueHandle('frank', 'acme'), name: 'Frank' });
    eve = await registerAgent(relay, { handle: uniqueHandle('eve', 'acme'), name: 'Eve' });
  });

  afterAll(async () => {
    await relay?.stop();
    await sink?.stop();
  });

  it('registers configs for participants only, masks their secrets, lists and deletes (idempotently) the caller’s own', async () => {
    const taskId = await createTask(relay.url, bob, frank, 'Configs please');
    const set = await rpc.request(PUSH_CONFIG_SUBJECTS.set, {
      caller: ref(bob),
      task_id: taskId,
      version: '1.0',
      config: {
        id: 'cfg-1',
        url: sink.url('/unused'),
        token: 'tok-0123456789abcdef',
        authentication: { schemes: ['Bearer'], credentials: 'secret-credentials-123' },
      },
    });
    expect(set).toEqual({
      id: 'cfg-1',
      task_id: taskId,
      url: sink.url('/unused'),
      token: '****cdef',
      authentication: { schemes: ['Bearer'], credentials: '****-123' },
    });
    const generated = await rpc.request(PUSH_CONFIG_SUBJECTS.set, {
      caller: ref(frank),
      task_id: taskId.toLowerCase(),
      version: '0.3',
      config: { url: sink.url('/unused2'), token: 'short' },
    });
    expect(generated.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(generated.token).toBe('****');

    await expect(
      rpc.request(PUSH_CONFIG_SUBJECTS.set, { caller: ref(eve), task_id: taskId, version: '1.0', config: { url: sink.url('/x') } }),
    ).rejects.toMatchObject({
      reason: 'not_a_participant',
    });
    await expect(rpc.request(PUSH_CONFIG_SUBJECTS.list, { caller: ref(eve), task_id: taskId })).rejects.toMatchObject({ reason: 'not_a_participant' });
    await expect(rpc.request(PUSH_CONFIG_SUBJECTS.get, { caller: ref(bob), task_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' })).rejects.toMatchObject({
      reason: 'thread_not_found',
    });
    await expect(
      rpc.request(PUSH_CONFIG_SUBJECTS.set, { caller: ref(bob), task_id: taskId, version: '1.0', config: { url: 'ftp://x' } }),
    ).rejects.toMatchObject({
      reason: 'invalid_params',
    });

    expect((await rpc.request(PUSH_CONFIG_SUBJECTS.list, { caller: ref(bob), task_id: taskId })).configs.map((config) => config.id)).toEqual(['cfg-1']);
    expect(await rpc.request(PUSH_CONFIG_SUBJECTS.get, { caller: ref(bob), task_id: taskId, config_id: 'cfg-1' })).toEqual(set);
    expect(await rpc.request(PUSH_CONFIG_SUBJECTS.get, { caller: ref(bob), task_id: taskId })).toEqual(set);
    await expect(rpc.request(PUSH_CONFIG_SUBJECTS.get, { caller: ref(frank), task_id: taskId, config_id: 'cfg-1' })).rejects.toMatchObject({
      reason: 'push_config_not_found',
    });

    expect(await rpc.request(PUSH_CONFIG_SUBJECTS.delete, { caller: ref(bob), task_id: taskId, config_id: 'cfg-1' })).toEqual({ deleted: true });
    expect(await rpc.request(PUSH_CONFIG_SUBJECTS.delete, { caller: ref(bob), task_id: taskId, config_id: 'cfg-1' })).toEqual({ deleted: false });
    await expect(rpc.request(PUSH_CONFIG_SUBJECTS.get, { caller: ref(bob), task_id: taskId, config_id: 'cfg-1' })).rejects.toMatchObject({
      reason: 'push_config_not_found',
    });
  });

  it('holds at most 10 configs per participant and task, in an id space of its own; re-setting an existing id replaces it', async () => {
    const taskId = await createTask(relay.url, bob, frank, 'Ten configs');
    for (let index = 0; index < 10; index++) {
      await rpc.request(PUSH_CONFIG_SUBJECTS.set, {
        caller: ref(bob),
        task_id: taskId,
        version: '1.0',
        config: { id: `c${index}`, url: sink.url(`/c${index}`) },
      });
    }
    await expect(
      rpc.request(PUSH_CONFIG_SUBJECTS.set, { caller: ref(bob), task_id: taskId, version: '1.0', config: { id: 'c10', url: sink.url('/c10') } }),
    ).rejects.toMatchObject({
      reason: 'push_config_limit',
    });
    const replaced = await rpc.request(PUSH_CONFIG_SUBJECTS.set, {
      caller: ref(bob),
      task_id: taskId,
      version: '0.3',
      config: { id: 'c1', url: sink.url('/c1-new') },
    });
    expect(replaced.url).toBe(sink.url('/c1-new'));
    // Frank's slots and ids are his own: Bob's ten neither count against him nor clash with his ids.
    const franks = await rpc.request(PUSH_CONFIG_SUBJECTS.set, {
      caller: ref(frank),
      task_id: taskId,
      version: '1.0',
      config: { id: 'c0', url: sink.url('/frank-c0') },
    });
    expect(franks.url).toBe(sink.url('/frank-c0'));
    expect((await rpc.request(PUSH_CONFIG_SUBJECTS.get, { caller: ref(bob), task_id: taskId, config_id: 'c0' })).url).toBe(sink.url('/c0'));
  });

  it('posts every later event of the task to each config, in its version’s format and with its authentication, until deleted', async () => {
    const taskId = await createTask(relay.url, bob, frank, 'Push me');
    await rpc.request(PUSH_CONFIG_SUBJECTS.set, {
      caller: ref(bob),
      task_id: taskId,
      version: '1.0',
      config: { id: 'v1', url: sink.url('/push-v1'), authentication: { schemes: ['Bearer'], credentials: 'secret-v1' } },
    });
    await rpc.request(PUSH_CONFIG_SUBJECTS.set, {
      caller: ref(frank),
      task_id: taskId,
      version: '0.3',
      config: { id: 'v03', url: sink.url('/push-v03'), token: 'tok-v03' },
    });

    await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
    await ok(relay.url, frank.api_key, 'message/send', { task_id: taskId, message: { role: 'user', parts: [{ type: 'text', text: 'On it' }] } });
    await eventually(() => expect({ v1: sink.to('/push-v1').length, v03: sink.to('/push-v03').length }).toEqual({ v1: 2, v03: 2 }), 15000);

    const v1 = sink.to('/push-v1');
    for (const request of v1) {
      expect(request.headers['content-type']).toBe('application/a2a+json');
      expect(request.headers.authorization).toBe('Bearer secret-v1');
      expect(request.headers['x-a2a-notification-token']).toBeUndefined();
      expect(request.headers['webhook-signature']).toBeUndefined();
    }
    const v1Bodies = v1.map(json);
    expect(v1Bodies).toContainEqual({
      statusUpdate: { taskId, contextId: expect.any(String), status: { state: 'TASK_STATE_WORKING', timestamp: expect.any(String) } },
    });
    expect(v1Bodies).toContainEqual({ message: expect.objectContaining({ taskId, role: 'ROLE_AGENT', parts: [{ text: 'On it' }] }) });

    const v03 = sink.to('/push-v03');
    for (const request of v03) {
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['x-a2a-notification-token']).toBe('tok-v03');
      expect(request.headers.authorization).toBeUndefined();
      expect(json(request)).toMatchObject({ kind: 'task', id: taskId, status: { state: 'working' } });
    }

    await rpc.request(PUSH_CONFIG_SUBJECTS.delete, { caller: ref(frank), task_id: taskId, config_id: 'v03' });
    await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'Done' });
    await eventually(() => expect(sink.to('/push-v1').length).toBe(3), 15000);
    expect(json(sink.to('/push-v1')[2])).toMatchObject({ statusUpdate: { taskId, status: { state: 'TASK_STATE_COMPLETED' } } });
    expect(sink.to('/push-v03')).toHaveLength(2);
  }, 40000);
});
