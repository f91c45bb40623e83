import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import { TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { RelayHarness } from './support/relay-harness';
import { apiKeyInterceptor, drain, nextEvent, summary } from './support/sdk-client';

/** What the client put on the wire: HTTP method and path (under the agent endpoint) of every call. */
const wire: string[] = [];

const recordingFetch: typeof fetch = async (input, init) => {
  const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  wire.push(`${init?.method ?? 'GET'} ${url.pathname.replace(/^\/a2a\/[^/]+/, '')}`);
  return fetch(input, init);
};

/** A v1.0 client of `<relay>/a2a/<handle>/` that picks the card's HTTP+JSON interface. */
function restClient(relay: RelayHarness, caller: RegisteredTestAgent, handle: string): Promise<Client> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new RestTransportFactory({ fetchImpl: recordingFetch })],
      preferredTransports: ['HTTP+JSON'],
      clientConfig: { interceptors: [apiKeyInterceptor(caller.api_key)] },
    }),
  );
  return factory.createFromUrl(`${relay.url}/a2a/${handle}/`);
}

/** The same through the SDK's v0.3 compat mode, on the card's v0.3 HTTP+JSON interface (`/v1/…`). */
async function legacyRestClient(relay: RelayHarness, caller: RegisteredTestAgent, handle: string): Promise<Client> {
  const card = await new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }).resolve(`${relay.url}/a2a/${handle}/`);
  const v03 = card.supportedInterfaces.filter((entry) => entry.protocolVersion === '0.3' && entry.protocolBinding === 'HTTP+JSON');
  expect(v03).toHaveLength(1);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new RestTransportFactory({ legacyCompat: { enabled: true }, fetchImpl: recordingFetch })],
      clientConfig: { interceptors: [apiKeyInterceptor(caller.api_key)] },
    }),
  );
  return factory.createFromAgentCard({ ...card, supportedInterfaces: v03 });
}

function userMessage(text: string, taskId = ''): Message {
  return {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    taskId,
    contextId: '',
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const NOT_BLOCKING = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true };

describe('A2A HTTP+JSON through the official @a2a-js/sdk REST transport', () => {
  let relay: RelayHarness;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let carol: RegisteredTestAgent;
  let aliceToBob: Client;

  /** AgentRelay dialect calls, as the recipient's coding agent makes them. */
  async function agentRelay(agent: RegisteredTestAgent, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const response = await request(relay.url)
      .post('/a2a')
      .set('authorization', `Bearer ${agent.api_key}`)
      .send({ jsonrpc: '2.0', id: 1, method, params })
      .expect(200);
    if (response.body.error) throw new Error(`${method}: ${JSON.stringify(response.body.error)}`);
    return response.body.result as Record<string, unknown>;
  }

  async function send(client: Client, text: string): Promise<Task> {
    const result = await client.sendMessage({ tenant: '', message: userMessage(text), configuration: NOT_BLOCKING, metadata: undefined });
    expect(result).toHaveProperty('status');
    return result as Task;
  }

  beforeAll(async () => {
    relay = await RelayHarness.start({ env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true' } });
    const org = `rest${randomUUID().slice(0, 6)}`;
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
    carol = await registerAgent(relay, { handle: uniqueHandle('carol', org), name: 'Carol' });
    aliceToBob = await restClient(relay, alice, bob.agent.handle);
  });

  afterAll(async () => {
    await relay.stop();
  });

  it('sends over POST /message:send, the interface it picked from the card', async () => {
    const task = await send(aliceToBob, 'Refactor the users API');
    expect(wire.at(-1)).toBe('POST /message:send');
    expect(task.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(task.metadata?.relay).toMatchObject({ sender: alice.agent.handle, recipient: bob.agent.handle });
    const inbox = await agentRelay(bob, 'tasks/list', { filter: { role: 'recipient' } });
    expect((inbox.items as { task_id: string }[]).map((item) => item.task_id)).toContain(task.id);
  });

  it('blocks a send until the recipient completes the task', async () => {
    const pending = aliceToBob.sendMessage({ tenant: '', message: userMessage('Run the migration over REST'), configuration: undefined, metadata: undefined });
    const taskId = await eventually(async () => {
      const inbox = await agentRelay(bob, 'tasks/list', { filter: { role: 'recipient', status: ['pending'] } });
      const item = (inbox.items as { task_id: string; summary_preview: string }[]).find((entry) => entry.summary_preview === 'Run the migration over REST');
      expect(item).toBeDefined();
      return item!.task_id;
    });
    await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'accept' });
    await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'done' });
    const task = (await pending) as Task;
    expect(task.id).toBe(taskId);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('gets a task with GET /tasks/{id}?historyLength, and lists with GET /tasks page by page', async () => {
    const first = await send(aliceToBob, 'first');
    await aliceToBob.sendMessage({ tenant: '', message: userMessage('second', first.id), configuration: NOT_BLOCKING, metadata: undefined });
    const last = await aliceToBob.getTask({ tenant: '', id: first.id, historyLength: 1 });
    expect(wire.at(-1)).toBe(`GET /tasks/${first.id}`);
    expect(last.history).toHaveLength(1);

    const carolToBob = await restClient(relay, carol, bob.agent.handle);
    const ids = [(await send(carolToBob, 'one')).id, (await send(carolToBob, 'two')).id, (await send(carolToBob, 'three')).id];
    const base = {
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      historyLength: 0,
      statusTimestampAfter: undefined,
      includeArtifacts: false,
    };
    const page1 = await carolToBob.listTasks({ ...base, pageSize: 2, pageToken: '' });
    expect(wire.at(-1)).toBe('GET /tasks');
    expect(page1.tasks.map((task) => task.id)).toEqual([ids[2], ids[1]]);
    expect(page1.totalSize).toBe(3);
    const page2 = await carolToBob.listTasks({ ...base, pageSize: 2, pageToken: page1.nextPageToken });
    expect(page2.tasks.map((task) => task.id)).toEqual([ids[0]]);
    const submitted = await carolToBob.listTasks({ ...base, status: TaskState.TASK_STATE_SUBMITTED, pageSize: 10, pageToken: '' });
    expect(submitted.tasks).toHaveLength(3);
    // Carol's tasks with Bob are not Alice's business, even at Bob's endpoint.
    const alices = await aliceToBob.listTasks({ ...base, pageSize: 100, pageToken: '' });
    expect(alices.tasks.map((task) => task.id)).not.toContain(ids[0]);
  });

  it('cancels with POST /tasks/{id}:cancel, then answers TaskNotCancelable; another pair gets TaskNotFound', async () => {
    const task = await send(aliceToBob, 'cancel me');
    const canceled = await aliceToBob.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    expect(wire.at(-1)).toBe(`POST /tasks/${task.id}:cancel`);
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(aliceToBob.cancelTask({ tenant: '', id: task.id, metadata: undefined })).rejects.toBeInstanceOf(TaskNotCancelableError);
    const carolToBob = await restClient(relay, carol, bob.agent.handle);
    await expect(carolToBob.getTask({ tenant: '', id: task.id, historyLength: undefined })).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(carolToBob.cancelTask({ tenant: '', id: task.id, metadata: undefined })).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('streams a send over POST /message:stream until the task completes', async () => {
    const events = aliceToBob.sendMessageStream({ tenant: '', message: userMessage('Stream over REST'), configuration: undefined, metadata: undefined });
    const first = await nextEvent(events);
    expect(wire.at(-1)).toBe('POST /message:stream');
    expect(summary(first)).toEqual(['task', TaskState.TASK_STATE_SUBMITTED]);
    const taskId = first.payload?.$case === 'task' ? first.payload.value.id : '';
    await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'accept' });
    expect(summary(await nextEvent(events))).toEqual(['statusUpdate', TaskState.TASK_STATE_WORKING]);
    await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'done' });
    expect((await drain(events)).map(summary).at(-1)).toEqual(['statusUpdate', TaskState.TASK_STATE_COMPLETED]);
  });

  it('subscribes with POST /tasks/{id}:subscribe, and is refused once the task is terminal', async () => {
    const task = await send(aliceToBob, 'follow along over REST');
    await agentRelay(bob, 'tasks/update', { task_id: task.id, transition: 'accept' });
    const events = aliceToBob.resubscribeTask({ tenant: '', id: task.id });
    expect(summary(await nextEvent(events))).toEqual(['task', TaskState.TASK_STATE_WORKING]);
    expect(wire.at(-1)).toBe(`POST /tasks/${task.id}:subscribe`);
    await agentRelay(bob, 'tasks/update', { task_id: task.id, transition: 'complete' });
    expect((await drain(events)).map(summary)).toEqual([['statusUpdate', TaskState.TASK_STATE_COMPLETED]]);
    await expect(drain(aliceToBob.resubscribeTask({ tenant: '', id: task.id }))).rejects.toBeInstanceOf(UnsupportedOperationError);
  });

  it('creates, reads, lists and deletes push configs under /tasks/{id}/pushNotificationConfigs', async () => {
    const task = await send(aliceToBob, 'push me over REST');
    const created = await aliceToBob.createTaskPushNotificationConfig({
      tenant: '',
      id: 'cfg-rest',
      taskId: task.id,
      url: 'http://127.0.0.1:9/hook',
      token: 'token-0123456789',
      authentication: { scheme: 'Bearer', credentials: 'webhook-secret-42' },
    });
    expect(wire.at(-1)).toBe(`POST /tasks/${task.id}/pushNotificationConfigs`);
    expect(created).toMatchObject({ id: 'cfg-rest', taskId: task.id, url: 'http://127.0.0.1:9/hook', authentication: { scheme: 'Bearer' } });
    expect(created.authentication?.credentials).not.toBe('webhook-secret-42');
    const read = await aliceToBob.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-rest' });
    expect(wire.at(-1)).toBe(`GET /tasks/${task.id}/pushNotificationConfigs/cfg-rest`);
    expect(read.url).toBe('http://127.0.0.1:9/hook');
    const listed = await aliceToBob.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 10, pageToken: '' });
    expect(listed.configs.map((config) => config.id)).toEqual(['cfg-rest']);
    await aliceToBob.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-rest' });
    expect(wire.at(-1)).toBe(`DELETE /tasks/${task.id}/pushNotificationConfigs/cfg-rest`);
    expect((await aliceToBob.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 10, pageToken: '' })).configs).toEqual([]);
    const carolToBob = await restClient(relay, carol, bob.agent.handle);
    await expect(carolToBob.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 10, pageToken: '' })).rejects.toBeInstanceOf(
      TaskNotFoundError,
    );
  });

  describe('v0.3 HTTP+JSON under /v1 (legacyCompat)', () => {
    it('sends, gets and cancels, answering TaskNotCancelable and TaskNotFound as v0.3 errors', async () => {
      const legacy = await legacyRestClient(relay, alice, bob.agent.handle);
      const task = await send(legacy, 'legacy REST');
      expect(wire.at(-1)).toBe('POST /v1/message:send');
      expect(task.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
      expect(task.history.map((entry) => entry.parts[0]?.content)).toEqual([{ $case: 'text', value: 'legacy REST' }]);
      const read = await legacy.getTask({ tenant: '', id: task.id, historyLength: 1 });
      expect(wire.at(-1)).toBe(`GET /v1/tasks/${task.id}`);
      expect(read.id).toBe(task.id);
      const canceled = await legacy.cancelTask({ tenant: '', id: task.id, metadata: undefined });
      expect(wire.at(-1)).toBe(`POST /v1/tasks/${task.id}:cancel`);
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      await expect(legacy.cancelTask({ tenant: '', id: task.id, metadata: undefined })).rejects.toBeInstanceOf(TaskNotCancelableError);
      const carols = await legacyRestClient(relay, carol, bob.agent.handle);
      await expect(carols.getTask({ tenant: '', id: task.id, historyLength: undefined })).rejects.toBeInstanceOf(TaskNotFoundError);
    });

    it('streams with /v1/message:stream and subscribes with GET /v1/tasks/{id}:subscribe', async () => {
      const legacy = await legacyRestClient(relay, alice, bob.agent.handle);
      const events = legacy.sendMessageStream({ tenant: '', message: userMessage('legacy REST stream'), configuration: undefined, metadata: undefined });
      const first = await nextEvent(events);
      expect(wire.at(-1)).toBe('POST /v1/message:stream');
      expect(summary(first)).toEqual(['task', TaskState.TASK_STATE_SUBMITTED]);
      const taskId = first.payload?.$case === 'task' ? first.payload.value.id : '';
      await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'accept' });
      expect(summary(await nextEvent(events))).toEqual(['statusUpdate', TaskState.TASK_STATE_WORKING]);
      const again = legacy.resubscribeTask({ tenant: '', id: taskId });
      expect(summary(await nextEvent(again))).toEqual(['task', TaskState.TASK_STATE_WORKING]);
      expect(wire.at(-1)).toBe(`GET /v1/tasks/${taskId}:subscribe`);
      await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'complete' });
      expect((await drain(events)).map(summary).at(-1)).toEqual(['statusUpdate', TaskState.TASK_STATE_COMPLETED]);
      expect((await drain(again)).map(summary).at(-1)).toEqual(['statusUpdate', TaskState.TASK_STATE_COMPLETED]);
    });

    it('manages push configs under /v1/tasks/{id}/pushNotificationConfigs and reads the card at /v1/card', async () => {
      const legacy = await legacyRestClient(relay, alice, bob.agent.handle);
      const task = await send(legacy, 'legacy push');
      const created = await legacy.createTaskPushNotificationConfig({
        tenant: '',
        id: 'cfg-v03',
        taskId: task.id,
        url: 'http://127.0.0.1:9/v03',
        token: 'token-0123456789',
        authentication: { scheme: 'Bearer', credentials: 'webhook-secret-03' },
      });
      expect(wire.at(-1)).toBe(`POST /v1/tasks/${task.id}/pushNotificationConfigs`);
      expect(created).toMatchObject({ id: 'cfg-v03', taskId: task.id, url: 'http://127.0.0.1:9/v03' });
      expect((await legacy.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-v03' })).url).toBe('http://127.0.0.1:9/v03');
      const listed = await legacy.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 10, pageToken: '' });
      expect(listed.configs.map((config) => config.id)).toEqual(['cfg-v03']);
      await legacy.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-v03' });
      expect(wire.at(-1)).toBe(`DELETE /v1/tasks/${task.id}/pushNotificationConfigs/cfg-v03`);
      expect((await legacy.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 10, pageToken: '' })).configs).toEqual([]);
      const card = await legacy.getAgentCard();
      expect(wire.at(-1)).toBe('GET /v1/card');
      expect(card.name).toBe('Bob');
    });
  });

  it('reads the extended card with GET /extendedAgentCard', async () => {
    const card = await aliceToBob.getAgentCard();
    expect(wire.at(-1)).toBe('GET /extendedAgentCard');
    expect(card.name).toBe('Bob');
    expect(card.supportedInterfaces).toContainEqual(
      expect.objectContaining({ url: `${relay.url}/a2a/${bob.agent.handle}`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' }),
    );
  });
});
