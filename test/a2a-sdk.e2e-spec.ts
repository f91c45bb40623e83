import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Role, TaskState, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { ContentTypeNotSupportedError, TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { eventually } from './support/eventually';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { RelayHarness } from './support/relay-harness';
import { apiKeyInterceptor, drain, nextEvent, summary } from './support/sdk-client';

/** What the client put on the wire: JSON-RPC method and A2A-Version header of every call. */
const wire: { method: string; version: string | null }[] = [];

const recordingFetch: typeof fetch = async (input, init) => {
  const headers = new Headers(init?.headers);
  if (typeof init?.body === 'string') wire.push({ method: (JSON.parse(init.body) as { method: string }).method, version: headers.get('a2a-version') });
  return fetch(input, init);
};

function factory(apiKey: string, legacyCompat = false): ClientFactory {
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory(legacyCompat ? { legacyCompat: { enabled: true }, fetchImpl: recordingFetch } : { fetchImpl: recordingFetch })],
      clientConfig: { interceptors: [apiKeyInterceptor(apiKey)] },
      ...(legacyCompat ? { cardResolver: new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }) } : {}),
    }),
  );
}

/** A v1.0 client of `<relay>/a2a/<handle>/`, discovered from its card. */
function v1Client(relay: RelayHarness, caller: RegisteredTestAgent, handle: string): Promise<Client> {
  return factory(caller.api_key).createFromUrl(`${relay.url}/a2a/${handle}/`);
}

/** The same, through the SDK's v0.3 compat mode, on the card's v0.3 interface only. */
async function v03Client(relay: RelayHarness, caller: RegisteredTestAgent, handle: string): Promise<Client> {
  const card = await new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }).resolve(`${relay.url}/a2a/${handle}/`);
  const v03 = card.supportedInterfaces.filter((entry) => entry.protocolVersion === '0.3' && entry.protocolBinding === 'JSONRPC');
  expect(v03).toHaveLength(1);
  return factory(caller.api_key, true).createFromAgentCard({ ...card, supportedInterfaces: v03 });
}

function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function userMessage(text: string, ids: { taskId?: string; contextId?: string; messageId?: string } = {}): Message {
  return {
    messageId: ids.messageId ?? randomUUID(),
    role: Role.ROLE_USER,
    parts: [textPart(text)],
    taskId: ids.taskId ?? '',
    contextId: ids.contextId ?? '',
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function asTask(result: unknown): Task {
  expect(result).toHaveProperty('status');
  return result as Task;
}

function textOf(message: Message | undefined): string | undefined {
  const part = message?.parts[0]?.content;
  return part?.$case === 'text' ? part.value : undefined;
}

describe('A2A through the official @a2a-js/sdk client', () => {
  let relay: RelayHarness;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let carol: RegisteredTestAgent;
  let aliceToBob: Client;

  /** AgentRelay dialect (docs/dialects.md#agentrelay) calls, as the recipient's coding agent makes them. */
  async function agentRelay(
    agent: RegisteredTestAgent,
    method: string,
    params: Record<string, unknown>,
    baseUrl = relay.url,
  ): Promise<Record<string, unknown>> {
    const response = await request(baseUrl)
      .post('/a2a')
      .set('authorization', `Bearer ${agent.api_key}`)
      .send({ jsonrpc: '2.0', id: 1, method, params })
      .expect(200);
    if (response.body.error) throw new Error(`${method}: ${JSON.stringify(response.body.error)}`);
    return response.body.result as Record<string, unknown>;
  }

  beforeAll(async () => {
    relay = await RelayHarness.start();
    const org = `sdk${randomUUID().slice(0, 6)}`;
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
    carol = await registerAgent(relay, { handle: uniqueHandle('carol', org), name: 'Carol' });
    aliceToBob = await v1Client(relay, alice, bob.agent.handle);
  });

  afterAll(async () => {
    await relay.stop();
  });

  it('sends without blocking: the task comes back submitted, addressed to the endpoint agent', async () => {
    const message = userMessage('Refactor the users API');
    const task = asTask(
      await aliceToBob.sendMessage({
        tenant: '',
        message,
        configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
        metadata: undefined,
      }),
    );
    expect(wire.at(-1)).toEqual({ method: 'SendMessage', version: '1.0' });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(task.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(task.contextId).not.toBe('');
    expect(task.history.map((entry) => [entry.messageId, entry.role, textOf(entry)])).toEqual([[message.messageId, Role.ROLE_USER, 'Refactor the users API']]);
    expect(task.metadata?.relay).toMatchObject({ sender: alice.agent.handle, recipient: bob.agent.handle, intent: 'inform' });

    const inbox = await agentRelay(bob, 'tasks/list', { filter: { role: 'recipient' } });
    expect((inbox.items as { task_id: string }[]).map((item) => item.task_id)).toContain(task.id);
  });

  it('blocks until the recipient completes the task through the AgentRelay methods', async () => {
    const message = userMessage('Please run the migration');
    const pending = aliceToBob.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined });
    const taskId = await eventually(async () => {
      const inbox = await agentRelay(bob, 'tasks/list', { filter: { role: 'recipient', status: ['pending'] } });
      const items = inbox.items as { task_id: string; summary_preview: string }[];
      expect(items.map((entry) => entry.summary_preview)).toContain('Please run the migration');
      const item = items.find((entry) => entry.summary_preview === 'Please run the migration')!;
      return item.task_id;
    });
    await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'accept' });
    await agentRelay(bob, 'message/send', { task_id: taskId, message: { role: 'agent', parts: [{ type: 'text', text: 'Migration ran cleanly' }] } });
    await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'done' });
    const task = asTask(await pending);
    expect(task.id).toBe(taskId);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.history.map((entry) => entry.role)).toEqual([Role.ROLE_USER, Role.ROLE_AGENT]);
    expect(textOf(task.status?.message)).toBe('Migration ran cleanly');
  });

  it('reads a task with a history length', async () => {
    const sent = asTask(
      await aliceToBob.sendMessage({
        tenant: '',
        message: userMessage('first'),
        configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
        metadata: undefined,
      }),
    );
    await aliceToBob.sendMessage({
      tenant: '',
      message: userMessage('second', { taskId: sent.id }),
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined,
    });
    const full = await aliceToBob.getTask({ tenant: '', id: sent.id, historyLength: undefined });
    expect(full.history.map(textOf)).toEqual(['first', 'second']);
    const last = await aliceToBob.getTask({ tenant: '', id: sent.id, historyLength: 1 });
    expect(last.history.map(textOf)).toEqual(['second']);
    expect(textOf(last.status?.message)).toBe('second');
  });

  it('lists the tasks between the caller and the endpoint agent, page by page, newest first', async () => {
    const carolToBob = await v1Client(relay, carol, bob.agent.handle);
    const ids: string[] = [];
    for (const text of ['one', 'two', 'three']) {
      const task = asTask(
        await carolToBob.sendMessage({
          tenant: '',
          message: userMessage(text),
          configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
          metadata: undefined,
        }),
      );
      ids.push(task.id);
    }
    const base = {
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      historyLength: 0,
      statusTimestampAfter: undefined,
      includeArtifacts: false,
    };
    const first = await carolToBob.listTasks({ ...base, pageSize: 2, pageToken: '' });
    expect(first.tasks.map((task) => task.id)).toEqual([ids[2], ids[1]]);
    expect(first.totalSize).toBe(3);
    expect(first.nextPageToken).not.toBe('');
    const second = await carolToBob.listTasks({ ...base, pageSize: 2, pageToken: first.nextPageToken });
    expect(second.tasks.map((task) => task.id)).toEqual([ids[0]]);
    expect(second.totalSize).toBe(3);
    expect(second.nextPageToken).toBe('');
    // Carol's tasks with Bob are not Alice's business, even at Bob's endpoint.
    const alices = await aliceToBob.listTasks({ ...base, pageSize: 100, pageToken: '' });
    expect(alices.tasks.map((task) => task.id)).not.toContain(ids[0]);
  });

  it('cancels a task its caller created, and answers TaskNotCancelable once it is terminal', async () => {
    const task = asTask(
      await aliceToBob.sendMessage({
        tenant: '',
        message: userMessage('cancel me'),
        configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
        metadata: undefined,
      }),
    );
    await agentRelay(bob, 'tasks/update', { task_id: task.id, transition: 'accept' });
    const canceled = await aliceToBob.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(aliceToBob.cancelTask({ tenant: '', id: task.id, metadata: undefined })).rejects.toBeInstanceOf(TaskNotCancelableError);
    await expect(
      aliceToBob.sendMessage({ tenant: '', message: userMessage('still there?', { taskId: task.id }), configuration: undefined, metadata: undefined }),
    ).rejects.toBeInstanceOf(UnsupportedOperationError);
  });

  it('answers TaskNotFound for unknown tasks and for tasks of another pair', async () => {
    await expect(aliceToBob.getTask({ tenant: '', id: '01HXYZ4K2VNJQP7R8MWDB3CSTF', historyLength: undefined })).rejects.toBeInstanceOf(TaskNotFoundError);
    const carolToBob = await v1Client(relay, carol, bob.agent.handle);
    const carols = asTask(
      await carolToBob.sendMessage({
        tenant: '',
        message: userMessage('private'),
        configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
        metadata: undefined,
      }),
    );
    await expect(aliceToBob.getTask({ tenant: '', id: carols.id, historyLength: undefined })).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(aliceToBob.cancelTask({ tenant: '', id: carols.id, metadata: undefined })).rejects.toBeInstanceOf(TaskNotFoundError);
    expect((await carolToBob.getTask({ tenant: '', id: carols.id, historyLength: undefined })).status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
  });

  it("refuses a text part whose declared mediaType the recipient's card does not list, with ContentTypeNotSupported (-32005), and creates nothing", async () => {
    const card = await aliceToBob.getAgentCard();
    expect(card.defaultInputModes).not.toContain('application/x-unsupported');
    const listed = async (): Promise<number> =>
      ((await agentRelay(bob, 'tasks/list', { filter: { role: 'recipient' }, page: { limit: 200 } })).items as unknown[]).length;
    const before = await listed();
    const unsupported: Part = { content: { $case: 'text', value: 'binary-ish' }, metadata: undefined, filename: '', mediaType: 'application/x-unsupported' };
    const sent = aliceToBob.sendMessage({
      tenant: '',
      message: { ...userMessage('ignored'), parts: [unsupported] },
      configuration: undefined,
      metadata: undefined,
    });
    // The SDK maps -32005 alone to ContentTypeNotSupportedError.
    await expect(sent).rejects.toBeInstanceOf(ContentTypeNotSupportedError);
    await expect(sent).rejects.toThrow('application/x-unsupported');
    expect(await listed()).toBe(before);
  });

  it('gives the authenticated caller the endpoint agent card', async () => {
    const card = await aliceToBob.getAgentCard();
    expect(card.name).toBe('Bob');
    expect(card.supportedInterfaces.map((entry) => entry.url)).toContain(`${relay.url}/a2a/${bob.agent.handle}`);
  });

  it('streams a send: the Task, then status updates while the recipient accepts and completes, then ends by itself', async () => {
    const events = aliceToBob.sendMessageStream({ tenant: '', message: userMessage('Stream the migration'), configuration: undefined, metadata: undefined });
    const first = await nextEvent(events);
    expect(wire.at(-1)).toEqual({ method: 'SendStreamingMessage', version: '1.0' });
    expect(summary(first)).toEqual(['task', TaskState.TASK_STATE_SUBMITTED]);
    const taskId = first.payload?.$case === 'task' ? first.payload.value.id : '';
    await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'accept' });
    expect(summary(await nextEvent(events))).toEqual(['statusUpdate', TaskState.TASK_STATE_WORKING]);
    await agentRelay(bob, 'message/send', { task_id: taskId, message: { role: 'agent', parts: [{ type: 'text', text: 'Migration ran cleanly' }] } });
    await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'done' });
    const rest = (await drain(events)).map(summary);
    expect(rest.at(-1)).toEqual(['statusUpdate', TaskState.TASK_STATE_COMPLETED]);
    expect(rest.every(([kind]) => kind === 'statusUpdate')).toBe(true);
  });

  it('resubscribes to a task from its current state until it is done', async () => {
    const task = asTask(
      await aliceToBob.sendMessage({
        tenant: '',
        message: userMessage('follow along'),
        configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
        metadata: undefined,
      }),
    );
    await agentRelay(bob, 'tasks/update', { task_id: task.id, transition: 'accept' });
    const events = aliceToBob.resubscribeTask({ tenant: '', id: task.id });
    expect(summary(await nextEvent(events))).toEqual(['task', TaskState.TASK_STATE_WORKING]);
    expect(wire.at(-1)).toEqual({ method: 'SubscribeToTask', version: '1.0' });
    await agentRelay(bob, 'tasks/update', { task_id: task.id, transition: 'complete' });
    expect((await drain(events)).map(summary)).toEqual([['statusUpdate', TaskState.TASK_STATE_COMPLETED]]);
    await expect(drain(aliceToBob.resubscribeTask({ tenant: '', id: task.id }))).rejects.toBeInstanceOf(UnsupportedOperationError);
  });

  describe('streams from the task event log, while the recipient works through a second edge', () => {
    let secondEdge: string;

    beforeAll(async () => {
      secondEdge = relay.urlOf(await relay.startEdge());
    });

    /** What Bob's coding agent does on the other edge: accept, reply, an artifact in two chunks, complete. */
    async function workOn(taskId: string): Promise<void> {
      await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'accept' }, secondEdge);
      await agentRelay(bob, 'message/send', { task_id: taskId, message: { role: 'agent', parts: [{ type: 'text', text: 'Reply from Bob' }] } }, secondEdge);
      for (const [index, text] of ['chunk one; ', 'chunk two'].entries()) {
        await agentRelay(
          bob,
          'tasks/updateStatus',
          { id: taskId, artifacts: [{ artifactId: 'log', name: 'log', parts: [{ kind: 'text', text }], append: index > 0, lastChunk: index > 0 }] },
          secondEdge,
        );
      }
      await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'complete' }, secondEdge);
    }

    /** A stream event with what the test checks of it: kind, state or chunk flags, and the text it carries. */
    function detail(event: StreamResponse): unknown[] {
      const payload = event.payload;
      switch (payload?.$case) {
        case 'task':
          return ['task', payload.value.status?.state];
        case 'statusUpdate':
          return ['status', payload.value.status?.state, textOf(payload.value.status?.message)];
        case 'artifactUpdate': {
          const part = payload.value.artifact?.parts[0]?.content;
          return ['artifact', payload.value.append, payload.value.lastChunk, part?.$case === 'text' ? part.value : undefined];
        }
        default:
          return [payload?.$case];
      }
    }

    const expected = [
      ['status', TaskState.TASK_STATE_WORKING, undefined],
      ['status', TaskState.TASK_STATE_WORKING, 'Reply from Bob'],
      ['artifact', false, false, 'chunk one; '],
      ['artifact', true, true, 'chunk two'],
      ['status', TaskState.TASK_STATE_COMPLETED, undefined],
    ];

    it.each([
      ['v1.0', false],
      ['v0.3 compat', true],
    ])('%s: sendMessageStream and resubscribeTask see the Task, WORKING, the reply, the artifact in two chunks and COMPLETED', async (_name, legacy) => {
      const client = legacy ? await v03Client(relay, alice, bob.agent.handle) : await v1Client(relay, alice, bob.agent.handle);
      const events = client.sendMessageStream({ tenant: '', message: userMessage('Stream it all'), configuration: undefined, metadata: undefined });
      const first = await nextEvent(events);
      expect(detail(first)).toEqual(['task', TaskState.TASK_STATE_SUBMITTED]);
      const taskId = first.payload?.$case === 'task' ? first.payload.value.id : '';
      const again = client.resubscribeTask({ tenant: '', id: taskId });
      expect(detail(await nextEvent(again))).toEqual(['task', TaskState.TASK_STATE_SUBMITTED]);
      await workOn(taskId);
      expect((await drain(events)).map(detail)).toEqual(expected);
      expect((await drain(again)).map(detail)).toEqual(expected);
      const read = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
      expect(read.artifacts.map((artifact) => artifact.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join(''))).toEqual([
        'chunk one; chunk two',
      ]);
    });

    it.each([
      ['v1.0', false],
      ['v0.3 compat', true],
    ])('%s: a subscription to a task that asks for input stays open until it completes', async (_name, legacy) => {
      const client = legacy ? await v03Client(relay, alice, bob.agent.handle) : await v1Client(relay, alice, bob.agent.handle);
      const task = asTask(
        await client.sendMessage({
          tenant: '',
          message: userMessage('Ask me something'),
          configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
          metadata: undefined,
        }),
      );
      const events = client.resubscribeTask({ tenant: '', id: task.id });
      expect(detail(await nextEvent(events))).toEqual(['task', TaskState.TASK_STATE_SUBMITTED]);
      await agentRelay(bob, 'tasks/update', { task_id: task.id, transition: 'accept' }, secondEdge);
      await agentRelay(
        bob,
        'tasks/update',
        { task_id: task.id, transition: 'request_input', message: { role: 'agent', parts: [{ type: 'text', text: 'Which branch?' }] } },
        secondEdge,
      );
      expect(detail(await nextEvent(events))).toEqual(['status', TaskState.TASK_STATE_WORKING, undefined]);
      expect(detail(await nextEvent(events))).toEqual(['status', TaskState.TASK_STATE_INPUT_REQUIRED, 'Which branch?']);
      await agentRelay(alice, 'message/send', { task_id: task.id, message: { role: 'user', parts: [{ type: 'text', text: 'main' }] } }, secondEdge);
      await agentRelay(bob, 'tasks/update', { task_id: task.id, transition: 'complete' }, secondEdge);
      expect((await drain(events)).map(detail)).toEqual([
        ['status', TaskState.TASK_STATE_WORKING, 'main'],
        ['status', TaskState.TASK_STATE_WORKING, undefined],
        ['status', TaskState.TASK_STATE_COMPLETED, undefined],
      ]);
    });
  });

  describe('v0.3 compat mode (legacyCompat)', () => {
    it('sends with message/send, reads with tasks/get and cancels with tasks/cancel', async () => {
      const legacy = await v03Client(relay, alice, bob.agent.handle);
      const task = asTask(
        await legacy.sendMessage({
          tenant: '',
          message: userMessage('legacy hello'),
          configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
          metadata: undefined,
        }),
      );
      expect(task.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
      expect(textOf(task.history[0])).toBe('legacy hello');
      const read = await legacy.getTask({ tenant: '', id: task.id, historyLength: 1 });
      expect(read.id).toBe(task.id);
      expect(read.history.map((entry) => entry.role)).toEqual([Role.ROLE_USER]);
      const canceled = await legacy.cancelTask({ tenant: '', id: task.id, metadata: undefined });
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      await expect(legacy.cancelTask({ tenant: '', id: task.id, metadata: undefined })).rejects.toBeInstanceOf(TaskNotCancelableError);
      await expect(legacy.getTask({ tenant: '', id: '01HXYZ4K2VNJQP7R8MWDB3CSTF', historyLength: undefined })).rejects.toBeInstanceOf(TaskNotFoundError);
      expect(wire.slice(-5)).toEqual([
        { method: 'message/send', version: '0.3' },
        { method: 'tasks/get', version: '0.3' },
        { method: 'tasks/cancel', version: '0.3' },
        { method: 'tasks/cancel', version: '0.3' },
        { method: 'tasks/get', version: '0.3' },
      ]);
    });

    it('blocks on message/send until the recipient completes', async () => {
      const legacy = await v03Client(relay, alice, bob.agent.handle);
      const pending = legacy.sendMessage({ tenant: '', message: userMessage('legacy blocking'), configuration: undefined, metadata: undefined });
      const taskId = await eventually(async () => {
        const inbox = await agentRelay(bob, 'tasks/list', { filter: { role: 'recipient', status: ['pending'] } });
        const items = inbox.items as { task_id: string; summary_preview: string }[];
        expect(items.map((entry) => entry.summary_preview)).toContain('legacy blocking');
        const item = items.find((entry) => entry.summary_preview === 'legacy blocking')!;
        return item.task_id;
      });
      await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'accept' });
      await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'complete' });
      const task = asTask(await pending);
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    });

    it('streams with message/stream and resubscribes with tasks/resubscribe', async () => {
      const legacy = await v03Client(relay, alice, bob.agent.handle);
      const events = legacy.sendMessageStream({ tenant: '', message: userMessage('legacy stream'), configuration: undefined, metadata: undefined });
      const first = await nextEvent(events);
      expect(wire.at(-1)).toEqual({ method: 'message/stream', version: '0.3' });
      expect(summary(first)).toEqual(['task', TaskState.TASK_STATE_SUBMITTED]);
      const taskId = first.payload?.$case === 'task' ? first.payload.value.id : '';
      await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'accept' });
      expect(summary(await nextEvent(events))).toEqual(['statusUpdate', TaskState.TASK_STATE_WORKING]);

      const again = legacy.resubscribeTask({ tenant: '', id: taskId });
      expect(summary(await nextEvent(again))).toEqual(['task', TaskState.TASK_STATE_WORKING]);
      expect(wire.at(-1)).toEqual({ method: 'tasks/resubscribe', version: '0.3' });
      await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'complete' });
      expect((await drain(events)).map(summary)).toEqual([['statusUpdate', TaskState.TASK_STATE_COMPLETED]]);
      expect((await drain(again)).map(summary)).toEqual([['statusUpdate', TaskState.TASK_STATE_COMPLETED]]);
    });
  });
});
