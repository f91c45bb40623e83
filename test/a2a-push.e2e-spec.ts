import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import request from 'supertest';
import { type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { expectRpcError } from './support/json-rpc';
import { RelayHarness } from './support/relay-harness';
import { testDatabaseUrl } from './support/test-env';
import { apiKeyInterceptor, userMessage } from './support/sdk-client';
import { WebhookSink } from './support/webhook-sink';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function sdkClient(relay: RelayHarness, caller: RegisteredTestAgent, handle: string): Promise<Client> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({})],
      clientConfig: { interceptors: [apiKeyInterceptor(caller.api_key)] },
    }),
  );
  return factory.createFromUrl(`${relay.url}/a2a/${handle}/`);
}

describe('A2A push-notification config methods', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let carol: RegisteredTestAgent;
  let sequence = 0;

  async function call(agent: RegisteredTestAgent, path: string, method: string, params: unknown, version?: string): Promise<Json> {
    const http = request(relay.url).post(path).set('authorization', `Bearer ${agent.api_key}`);
    if (version !== undefined) http.set('a2a-version', version);
    const response = await http.send({ jsonrpc: '2.0', id: ++sequence, method, params }).expect(200);
    return response.body as Json;
  }

  async function newTask(from: RegisteredTestAgent, to: RegisteredTestAgent, text: string, configuration: Json = {}): Promise<Json> {
    const body = await call(
      from,
      `/a2a/${to.agent.handle}`,
      'SendMessage',
      { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] }, configuration: { returnImmediately: true, ...configuration } },
      '1.0',
    );
    if (body.error) throw new Error(JSON.stringify(body.error));
    return body.result.task as Json;
  }

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({ env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms' } });
    const org = `push${randomUUID().slice(0, 6)}`;
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
    carol = await registerAgent(relay, { handle: uniqueHandle('carol', org), name: 'Carol' });
  });

  afterAll(async () => {
    await relay?.stop();
    await sink?.stop();
  });

  it('creates, reads, lists and deletes configs with the SDK (v1.0), credentials masked', async () => {
    const client = await sdkClient(relay, alice, bob.agent.handle);
    const sent = (await client.sendMessage({
      tenant: '',
      message: userMessage('push me'),
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined,
    })) as Task;
    const created = await client.createTaskPushNotificationConfig({
      tenant: '',
      id: 'cfg-sdk',
      taskId: sent.id,
      url: sink.url('/sdk'),
      token: 'token-0123456789',
      authentication: { scheme: 'Bearer', credentials: 'webhook-secret-42' },
    });
    expect(created).toMatchObject({ id: 'cfg-sdk', taskId: sent.id, url: sink.url('/sdk'), authentication: { scheme: 'Bearer' } });
    expect(created.authentication?.credentials).not.toBe('webhook-secret-42');
    expect(created.token).not.toBe('token-0123456789');

    const read = await client.getTaskPushNotificationConfig({ tenant: '', taskId: sent.id, id: 'cfg-sdk' });
    expect(read.url).toBe(sink.url('/sdk'));
    const listed = await client.listTaskPushNotificationConfig({ tenant: '', taskId: sent.id, pageSize: 10, pageToken: '' });
    expect(listed.configs.map((config) => config.id)).toEqual(['cfg-sdk']);
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: sent.id, id: 'cfg-sdk' });
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: sent.id, id: 'cfg-sdk' });
    expect((await client.listTaskPushNotificationConfig({ tenant: '', taskId: sent.id, pageSize: 10, pageToken: '' })).configs).toEqual([]);

    const stranger = await sdkClient(relay, carol, bob.agent.handle);
    await expect(stranger.listTaskPushNotificationConfig({ tenant: '', taskId: sent.id, pageSize: 10, pageToken: '' })).rejects.toBeInstanceOf(
      TaskNotFoundError,
    );
  });

  it('speaks the v0.3 shapes on tasks/pushNotificationConfig/*', async () => {
    const task = await newTask(alice, bob, 'legacy push');
    const set = await call(alice, '/a2a', 'tasks/pushNotificationConfig/set', {
      taskId: task.id,
      pushNotificationConfig: { id: 'cfg-03', url: sink.url('/v03'), token: 'tok03', authentication: { schemes: ['Bearer'], credentials: 'cred-000003' } },
    });
    expect(set.result).toMatchObject({
      taskId: task.id,
      pushNotificationConfig: { id: 'cfg-03', url: sink.url('/v03'), authentication: { schemes: ['Bearer'] } },
    });
    expect(set.result.pushNotificationConfig.authentication.credentials).not.toBe('cred-000003');
    expect((await call(alice, '/a2a', 'tasks/pushNotificationConfig/get', { id: task.id, pushNotificationConfigId: 'cfg-03' })).result).toEqual(set.result);
    expect((await call(alice, '/a2a', 'tasks/pushNotificationConfig/get', { id: task.id })).result).toEqual(set.result);
    expect((await call(alice, '/a2a', 'tasks/pushNotificationConfig/list', { id: task.id })).result).toEqual([set.result]);
    expect((await call(alice, '/a2a', 'tasks/pushNotificationConfig/delete', { id: task.id, pushNotificationConfigId: 'cfg-03' })).result).toBeNull();
    expect((await call(alice, '/a2a', 'tasks/pushNotificationConfig/delete', { id: task.id, pushNotificationConfigId: 'cfg-03' })).result).toBeNull();
    expect((await call(alice, '/a2a', 'tasks/pushNotificationConfig/get', { id: task.id, pushNotificationConfigId: 'cfg-03' })).error.code).toBe(-32001);
  });

  it('answers -32001 to another pair and -32602 past 10 configs or with a bad URL', async () => {
    const task = await newTask(alice, bob, 'limits');
    for (const [method, params] of [
      ['CreateTaskPushNotificationConfig', { taskId: task.id, url: sink.url('/x') }],
      ['GetTaskPushNotificationConfig', { taskId: task.id, id: 'a' }],
      ['ListTaskPushNotificationConfigs', { taskId: task.id }],
      ['DeleteTaskPushNotificationConfig', { taskId: task.id, id: 'a' }],
    ] as const) {
      expect([method, (await call(carol, '/a2a', method, params, '1.0')).error?.code]).toEqual([method, -32001]);
    }
    expect((await call(alice, `/a2a/${carol.agent.handle}`, 'ListTaskPushNotificationConfigs', { taskId: task.id }, '1.0')).error.code).toBe(-32001);
    const bad = await call(alice, '/a2a', 'CreateTaskPushNotificationConfig', { taskId: task.id, url: 'ftp://nope' }, '1.0');
    expectRpcError(bad.error, { code: -32602, field: 'params.url', shape: 'error-info' });
    for (let index = 0; index < 10; index++) {
      expect(
        (await call(alice, '/a2a', 'CreateTaskPushNotificationConfig', { taskId: task.id, id: `c${index}`, url: sink.url(`/c${index}`) }, '1.0')).error,
      ).toBeUndefined();
    }
    expect((await call(alice, '/a2a', 'CreateTaskPushNotificationConfig', { taskId: task.id, id: 'c10', url: sink.url('/c10') }, '1.0')).error.code).toBe(
      -32602,
    );
  });

  it('registers an inline config on send, and the worker’s completion reaches the webhook', async () => {
    const params = {
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'notify me' }] },
      configuration: {
        returnImmediately: true,
        taskPushNotificationConfig: { url: sink.url('/inline'), authentication: { scheme: 'Bearer', credentials: 'inline-secret' } },
      },
    };
    const task = (await call(alice, `/a2a/${bob.agent.handle}`, 'SendMessage', params, '1.0')).result.task as Json;
    const retried = await call(alice, `/a2a/${bob.agent.handle}`, 'SendMessage', params, '1.0');
    expect(retried.result.task.id).toBe(task.id);
    const listed = await call(alice, '/a2a', 'ListTaskPushNotificationConfigs', { taskId: task.id }, '1.0');
    expect(listed.result.configs.map((config: Json) => config.url)).toEqual([sink.url('/inline')]);
    const completed = await call(bob, '/a2a', 'CompleteTask', { id: task.id, artifacts: [{ artifactId: 'r', parts: [{ text: 'result' }] }] }, '1.0');
    expect(completed.error).toBeUndefined();
    const delivery = await eventually(() => {
      const inline = sink.requests.filter((entry) => entry.path === '/inline');
      expect(inline.map((entry) => entry.body)).toContainEqual(expect.stringContaining('TASK_STATE_COMPLETED'));
      return inline.find((entry) => entry.body.includes('TASK_STATE_COMPLETED'))!;
    });
    expect(delivery.headers.authorization).toBe('Bearer inline-secret');
    expect(delivery.headers['content-type']).toMatch(/application\/a2a\+json/);
    expect(delivery.body).toContain(task.id);
    // It continues the trace of the handoff (docs/chains.md), though the completion's call carried none.
    const db = new PgClient({ connectionString: testDatabaseUrl() });
    await db.connect();
    try {
      const [{ trace_id: traceId }] = (await db.query<{ trace_id: string }>(`SELECT "trace_id" FROM "tasks"."tasks" WHERE "id" = $1`, [task.id])).rows;
      expect(delivery.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    } finally {
      await db.end();
    }
  });
});
