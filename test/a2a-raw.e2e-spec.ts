import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { EventCollector } from './support/event-collector';
import { eventually } from './support/eventually';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { RelayHarness } from './support/relay-harness';
import { openSse, type SseEvent, type SseStream } from './support/sse';
import { TaskEventWaiter } from '../apps/edge/src/jsonrpc/a2a/task-event-waiter';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Raw JSON-RPC against the standard A2A surface: both method spellings, the version header,
 * contexts, idempotency, history, list filters, the history budget, blocking sends and BOLA.
 */
describe('A2A JSON-RPC, raw', () => {
  let relay: RelayHarness;
  let org: string;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let carol: RegisteredTestAgent;
  let sequence = 0;

  async function call(agent: RegisteredTestAgent, path: string, method: string, params: unknown, version?: string, baseUrl = relay.url): Promise<{ status: number; body: Json }> {
    const http = request(baseUrl).post(path).set('x-api-key', agent.api_key);
    if (version !== undefined) http.set('a2a-version', version);
    const response = await http.send({ jsonrpc: '2.0', id: ++sequence, method, params });
    return { status: response.status, body: response.body as Json };
  }

  /** A v1.0 call that must succeed; returns its result. */
  async function v1(agent: RegisteredTestAgent, path: string, method: string, params: unknown, baseUrl?: string): Promise<Json> {
    const { status, body } = await call(agent, path, method, params, '1.0', baseUrl);
    if (status !== 200 || body.error) throw new Error(`${method} answered ${status}: ${JSON.stringify(body.error ?? body)}`);
    return body.result as Json;
  }

  /** A v1.0 call that must fail; returns the JSON-RPC error. */
  async function v1Error(agent: RegisteredTestAgent, path: string, method: string, params: unknown, baseUrl?: string): Promise<Json> {
    const { body } = await call(agent, path, method, params, '1.0', baseUrl);
    if (!body.error) throw new Error(`${method} unexpectedly answered ${JSON.stringify(body.result)}`);
    return body.error as Json;
  }

  /** The metadata of the ErrorInfo of a v1.0 error. */
  function errorInfo(error: Json): Json {
    expect(Array.isArray(error.data)).toBe(true);
    return error.data[0] as Json;
  }

  function message(text: string, extra: Json = {}): Json {
    return { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra };
  }

  /** Creates a task from `from` at `to`'s endpoint without blocking; returns the v1.0 Task. */
  async function newTask(from: RegisteredTestAgent, to: RegisteredTestAgent, text: string, extra: Json = {}): Promise<Json> {
    const result = await v1(from, `/a2a/${to.agent.handle}`, 'SendMessage', { message: message(text, extra), configuration: { returnImmediately: true } });
    return result.task as Json;
  }

  async function agentRelay(agent: RegisteredTestAgent, method: string, params: Json): Promise<Json> {
    const { body } = await call(agent, '/a2a', method, params);
    if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
    return body.result as Json;
  }

  async function getTask(agent: RegisteredTestAgent, id: string, extra: Json = {}): Promise<Json> {
    return v1(agent, '/a2a', 'GetTask', { id, ...extra });
  }

  async function agent(name: string): Promise<RegisteredTestAgent> {
    return registerAgent(relay, { handle: uniqueHandle(name, org), name: name[0].toUpperCase() + name.slice(1) });
  }

  beforeAll(async () => {
    relay = await RelayHarness.start();
    org = `raw${randomUUID().slice(0, 6)}`;
    alice = await agent('alice');
    bob = await agent('bob');
    carol = await agent('carol');
  });

  afterAll(async () => {
    await relay.stop();
  });

  describe('both spellings of every method, shaped by the version header', () => {
    it.each([
      ['SendMessage', undefined],
      ['message/send', undefined],
      ['SendMessage', '0.3'],
      ['message/send', '0.3'],
    ])('%s with A2A-Version %p answers a bare v0.3 Task', async (method, version) => {
      const { body } = await call(alice, `/a2a/${bob.agent.handle}`, method, {
        message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'v0.3 hello' }] },
        configuration: { blocking: false },
      }, version);
      expect(body.error).toBeUndefined();
      expect(body.result).toMatchObject({ kind: 'task', status: { state: 'submitted' }, history: [{ kind: 'message', role: 'user', parts: [{ kind: 'text', text: 'v0.3 hello' }] }] });
      expect(body.result.metadata.relay).toMatchObject({ sender: alice.agent.handle, recipient: bob.agent.handle });
    });

    it.each([
      ['SendMessage', '1.0'],
      ['message/send', '1.0'],
      ['SendMessage', '1.0.2'],
    ])('%s with A2A-Version %s answers {task} in ProtoJSON', async (method, version) => {
      const { body } = await call(alice, `/a2a/${bob.agent.handle}`, method, { message: message('v1 hello'), configuration: { returnImmediately: true } }, version);
      expect(body.error).toBeUndefined();
      expect(body.result.task).toMatchObject({ status: { state: 'TASK_STATE_SUBMITTED' }, history: [{ role: 'ROLE_USER', parts: [{ text: 'v1 hello' }] }] });
      expect(body.result.task).not.toHaveProperty('kind');
      expect(body.result.task.history[0]).not.toHaveProperty('kind');
      expect(body.result.task.history[0].parts[0]).not.toHaveProperty('kind');
    });

    it('rejects an unsupported A2A-Version with -32009', async () => {
      for (const version of ['2.0', '0.5', 'latest']) {
        const { body } = await call(alice, `/a2a/${bob.agent.handle}`, 'SendMessage', { message: message('x') }, version);
        expect(body.error.code).toBe(-32009);
      }
    });

    it.each([
      ['GetTask', '1.0'],
      ['tasks/get', '1.0'],
      ['GetTask', undefined],
      ['tasks/get', undefined],
    ])('%s (A2A-Version %p) reads a task', async (method, version) => {
      const task = await newTask(alice, bob, 'read me');
      const { body } = await call(alice, `/a2a/${bob.agent.handle}`, method, { id: task.id }, version);
      const result = version === '1.0' ? body.result : body.result;
      expect(result.id).toBe(task.id);
      expect(result.status.state).toBe(version === '1.0' ? 'TASK_STATE_SUBMITTED' : 'submitted');
      if (version === undefined) expect(result.kind).toBe('task');
    });

    it.each(['ListTasks', 'tasks/list'])('%s with A2A-Version 1.0 lists tasks', async (method) => {
      const task = await newTask(alice, bob, 'list me');
      const result = await v1(alice, `/a2a/${bob.agent.handle}`, method, { pageSize: 100 });
      expect(result.tasks.map((entry: Json) => entry.id)).toContain(task.id);
      expect(result).toHaveProperty('nextPageToken');
      expect(result.pageSize).toBe(100);
      expect(typeof result.totalSize).toBe('number');
    });

    it('ListTasks without a version header lists tasks in v0.3 shapes, while tasks/list stays AgentRelay', async () => {
      const task = await newTask(alice, bob, 'list me in v0.3');
      const standard = await call(alice, `/a2a/${bob.agent.handle}`, 'ListTasks', { pageSize: 100 });
      expect(standard.body.error).toBeUndefined();
      const listed = standard.body.result.tasks.find((entry: Json) => entry.id === task.id);
      expect(listed).toMatchObject({ kind: 'task', status: { state: 'submitted' } });
      const agentRelayList = await call(alice, '/a2a', 'tasks/list', { filter: { role: 'sender' } });
      expect(agentRelayList.body.result.items.map((item: Json) => item.task_id)).toContain(task.id);
    });

    it.each([
      ['CancelTask', '1.0', 'TASK_STATE_CANCELED'],
      ['tasks/cancel', '1.0', 'TASK_STATE_CANCELED'],
      ['CancelTask', undefined, 'canceled'],
      ['tasks/cancel', undefined, 'canceled'],
    ])('%s (A2A-Version %p) cancels', async (method, version, state) => {
      const task = await newTask(alice, bob, 'cancel me');
      const { body } = await call(alice, `/a2a/${bob.agent.handle}`, method, { id: task.id }, version);
      expect(body.error).toBeUndefined();
      expect(body.result.status.state).toBe(state);
    });

    it.each(['CompleteTask', 'tasks/complete'])('%s lets the recipient complete with artifacts', async (method) => {
      const task = await newTask(alice, bob, 'complete me');
      const result = await v1(bob, `/a2a/${alice.agent.handle}`, method, { id: task.id, artifacts: [{ artifactId: 'a1', name: 'answer', parts: [{ text: 'Done!' }] }] });
      expect(result.status.state).toBe('TASK_STATE_COMPLETED');
      expect(result.artifacts).toEqual([{ artifactId: 'a1', name: 'answer', parts: [{ text: 'Done!' }] }]);
    });

    it.each(['UpdateStatus', 'tasks/updateStatus'])('%s lets the recipient report progress', async (method) => {
      const task = await newTask(alice, bob, 'work on me');
      const result = await v1(bob, `/a2a/${alice.agent.handle}`, method, { id: task.id, status: { state: 'TASK_STATE_WORKING', message: 'Processing step 2 of 5...' } });
      expect(result.status.state).toBe('TASK_STATE_WORKING');
      expect(result.status.message).toMatchObject({ role: 'ROLE_AGENT', parts: [{ text: 'Processing step 2 of 5...' }] });
    });

    it.each([
      ['GetExtendedAgentCard', '1.0'],
      ['agent/getAuthenticatedExtendedCard', '1.0'],
      ['agent/getAuthenticatedExtendedCard', undefined],
    ])('%s (A2A-Version %p) returns the endpoint agent card', async (method, version) => {
      const { body } = await call(alice, `/a2a/${bob.agent.handle}/`, method, undefined, version);
      expect(body.error).toBeUndefined();
      expect(body.result.name).toBe('Bob');
      if (version === '1.0') expect(body.result.supportedInterfaces[0].url).toMatch(new RegExp(`/a2a/${bob.agent.handle}$`));
      else expect(body.result).toMatchObject({ protocolVersion: '0.3.0', url: expect.stringMatching(/\/a2a\//), preferredTransport: 'JSONRPC' });
    });
  });

  describe('addressing', () => {
    it('needs a recipient on POST /a2a, from message.metadata.recipient or the recipient param', async () => {
      const error = await v1Error(alice, '/a2a', 'SendMessage', { message: message('to whom?') });
      expect(error.code).toBe(-32602);
      expect(errorInfo(error).metadata.field).toBe('recipient');

      const viaMetadata = await v1(alice, '/a2a', 'SendMessage', { message: message('to bob', { metadata: { recipient: bob.agent.handle } }), configuration: { returnImmediately: true } });
      expect(viaMetadata.task.metadata.relay.recipient).toBe(bob.agent.handle);
      const viaParam = await v1(alice, '/a2a/', 'SendMessage', { recipient: bob.agent.handle, message: message('to bob again'), configuration: { returnImmediately: true } });
      expect(viaParam.task.metadata.relay.recipient).toBe(bob.agent.handle);
    });

    it('answers 404 for the endpoint of an unknown agent', async () => {
      const { status } = await call(alice, `/a2a/nobody-${randomUUID().slice(0, 6)}@${org}`, 'SendMessage', { message: message('hello?') }, '1.0');
      expect(status).toBe(404);
      const get = await call(alice, `/a2a/nobody-${randomUUID().slice(0, 6)}@${org}/`, 'GetTask', { id: '01HXYZ4K2VNJQP7R8MWDB3CSTF' }, '1.0');
      expect(get.status).toBe(404);
    });

    it('answers with a trailing slash on every route', async () => {
      const result = await v1(alice, `/a2a/${bob.agent.handle}/`, 'SendMessage', { message: message('slash'), configuration: { returnImmediately: true } });
      expect(result.task.id).toBeDefined();
      expect((await v1(alice, '/a2a/', 'GetTask', { id: result.task.id })).id).toBe(result.task.id);
    });
  });

  describe('contexts', () => {
    it('continues a task, adds a sibling with contextId only, and lets the worker open a reverse sibling', async () => {
      const first = await newTask(alice, bob, 'context root');
      const appended = await v1(alice, `/a2a/${bob.agent.handle}`, 'SendMessage', { message: message('more', { taskId: first.id }), configuration: { returnImmediately: true } });
      expect(appended.task.id).toBe(first.id);
      expect(appended.task.history.map((entry: Json) => entry.parts[0].text)).toEqual(['context root', 'more']);

      const sibling = await newTask(alice, bob, 'sibling', { contextId: first.contextId });
      expect(sibling.id).not.toBe(first.id);
      expect(sibling.contextId).toBe(first.contextId);

      const reverse = await newTask(bob, alice, 'reverse', { contextId: first.contextId });
      expect(reverse.contextId).toBe(first.contextId);
      expect(reverse.metadata.relay).toMatchObject({ sender: bob.agent.handle, recipient: alice.agent.handle });
      expect(reverse.history[0].role).toBe('ROLE_USER');

      const listed = await v1(alice, '/a2a', 'ListTasks', { contextId: first.contextId });
      expect(listed.tasks.map((entry: Json) => entry.id).sort()).toEqual([first.id, sibling.id, reverse.id].sort());
    });

    it('rejects a contextId that does not match the task, and a context the caller is not part of', async () => {
      const task = await newTask(alice, bob, 'mine');
      const other = await newTask(alice, bob, 'other');
      const { body } = await call(alice, `/a2a/${bob.agent.handle}`, 'SendMessage', { message: message('wrong context', { taskId: task.id, contextId: other.contextId }), configuration: { returnImmediately: true } }, '1.0');
      expect(body.error.code).toBe(-32602);
      expect(errorInfo(body.error).metadata.field).toBe('message.contextId');
      expect((await getTask(alice, task.id)).history).toHaveLength(1);

      const intruder = await call(carol, `/a2a/${bob.agent.handle}`, 'SendMessage', { message: message('let me in', { contextId: task.contextId }), configuration: { returnImmediately: true } }, '1.0');
      expect(intruder.body.error.code).toBe(-32602);
      expect(errorInfo(intruder.body.error).metadata.field).toBe('message.contextId');
      const listed = await v1(alice, '/a2a', 'ListTasks', { contextId: task.contextId });
      expect(listed.tasks).toHaveLength(1);
    });
  });

  describe('context limit', () => {
    it('holds at most 100 tasks per context, whichever direction they go', async () => {
      const hana = await agent('hana');
      const ivan = await agent('ivan');
      const root = await newTask(hana, ivan, 'task 1');
      for (let index = 2; index <= 100; index++) {
        const [from, to] = index % 2 ? [hana, ivan] : [ivan, hana];
        await newTask(from, to, `task ${index}`, { contextId: root.contextId });
      }
      const error = await v1Error(hana, `/a2a/${ivan.agent.handle}`, 'SendMessage', { message: message('task 101', { contextId: root.contextId }), configuration: { returnImmediately: true } });
      expect(error.code).toBe(-32004);
      expect((await v1(hana, '/a2a', 'ListTasks', { contextId: root.contextId, pageSize: 1 })).totalSize).toBe(100);
    });
  });

  describe('messageId idempotency', () => {
    it('returns the original task for the same messageId and content, and errs on different content', async () => {
      const messageId = randomUUID();
      const params = { message: { messageId, role: 'ROLE_USER', parts: [{ text: 'exactly once' }] }, configuration: { returnImmediately: true } };
      const first = await v1(alice, `/a2a/${bob.agent.handle}`, 'SendMessage', params);
      const again = await v1(alice, `/a2a/${bob.agent.handle}`, 'SendMessage', params);
      expect(again.task.id).toBe(first.task.id);
      expect(again.task.history).toHaveLength(1);

      const error = await v1Error(alice, `/a2a/${bob.agent.handle}`, 'SendMessage', { ...params, message: { ...params.message, parts: [{ text: 'something else' }] } });
      expect(error.code).toBe(-32602);
      const legacy = await call(alice, `/a2a/${bob.agent.handle}`, 'message/send', { message: { kind: 'message', messageId, role: 'user', parts: [{ kind: 'text', text: 'something else' }] }, configuration: { blocking: false } });
      expect(legacy.body.error.code).toBe(-32602);
    });
  });

  describe('historyLength', () => {
    it('accepts both spellings: 0 drops the history, N keeps the most recent N', async () => {
      const task = await newTask(alice, bob, 'h1');
      for (const text of ['h2', 'h3']) await v1(alice, '/a2a', 'SendMessage', { message: message(text, { taskId: task.id }), configuration: { returnImmediately: true } });
      const none = await getTask(alice, task.id, { historyLength: 0 });
      expect(none).not.toHaveProperty('history');
      expect(none.status.message.parts[0].text).toBe('h3');
      expect((await getTask(alice, task.id, { history_length: 2 })).history.map((entry: Json) => entry.parts[0].text)).toEqual(['h2', 'h3']);
      expect((await getTask(alice, task.id)).history).toHaveLength(3);
      const legacy = await call(alice, '/a2a', 'tasks/get', { id: task.id, historyLength: 1 });
      expect(legacy.body.result.history.map((entry: Json) => entry.parts[0].text)).toEqual(['h3']);
      const sent = await v1(alice, '/a2a', 'SendMessage', { message: message('h4', { task_id: task.id }), configuration: { return_immediately: true, history_length: 1 } });
      expect(sent.task.history.map((entry: Json) => entry.parts[0].text)).toEqual(['h4']);
    });
  });

  describe('long histories', () => {
    it('returns a history larger than one service reply whole, and flags it when it passes the budget', async () => {
      const big = (letter: string): Json[] => [1, 2, 3].map(() => ({ text: letter.repeat(100_000) }));
      const task = await newTask(alice, bob, 'x', { parts: big('a') });
      await v1(alice, '/a2a', 'SendMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: task.id, parts: big('b') }, configuration: { returnImmediately: true, historyLength: 0 } });
      await v1(alice, '/a2a', 'SendMessage', { message: message('small', { taskId: task.id }), configuration: { returnImmediately: true, historyLength: 0 } });

      const whole = await getTask(alice, task.id);
      expect(whole.history.map((entry: Json) => entry.parts.length)).toEqual([3, 3, 1]);
      expect(whole.history[0].parts[0].text).toHaveLength(100_000);
      expect(whole.metadata.relay).not.toHaveProperty('historyTruncated');
      const listed = await v1(alice, `/a2a/${bob.agent.handle}`, 'ListTasks', {});
      expect(listed.tasks.find((entry: Json) => entry.id === task.id).history).toHaveLength(3);

      const small = await relay.startEdge({ RELAY_LIST_HISTORY_BUDGET_BYTES: '2048' });
      const cut = await v1(alice, '/a2a', 'GetTask', { id: task.id }, relay.urlOf(small));
      expect(cut.metadata.relay.historyTruncated).toBe(true);
      expect(cut.history.at(-1).parts[0].text).toBe('small');
      expect(cut.history.length).toBeLessThan(3);
    });
  });

  describe('ListTasks filters', () => {
    it('filters by status, context and status timestamp, pages with a stable totalSize', async () => {
      const dave = await agent('dave');
      const erin = await agent('erin');
      const path = `/a2a/${erin.agent.handle}`;
      const t0 = await newTask(dave, erin, 'zero');
      const t1 = await newTask(dave, erin, 'one');
      const t2 = await newTask(dave, erin, 'two');
      const mark = t2.status.timestamp as string;
      await agentRelay(erin, 'tasks/update', { task_id: t1.id, transition: 'accept' });

      const working = await v1(dave, path, 'ListTasks', { status: 'TASK_STATE_WORKING' });
      expect(working.tasks.map((entry: Json) => entry.id)).toEqual([t1.id]);
      expect(working.totalSize).toBe(1);
      expect((await v1(dave, path, 'ListTasks', { context_id: t0.contextId })).tasks.map((entry: Json) => entry.id)).toEqual([t0.id]);
      const recent = (await v1(dave, path, 'ListTasks', { statusTimestampAfter: mark })).tasks.map((entry: Json) => entry.id);
      expect(recent).toContain(t1.id);
      expect(recent).not.toContain(t0.id);

      const all = await v1(dave, path, 'ListTasks', {});
      expect(all.tasks.map((entry: Json) => entry.id)).toEqual([t1.id, t2.id, t0.id]);
      expect(all).toMatchObject({ totalSize: 3, nextPageToken: '', pageSize: 50 });
      const page1 = await v1(dave, path, 'ListTasks', { page_size: 1, history_length: 0 });
      expect(page1.tasks[0]).not.toHaveProperty('history');
      expect(page1.tasks[0]).not.toHaveProperty('artifacts');
      await newTask(dave, erin, 'three');
      const page2 = await v1(dave, path, 'ListTasks', { pageSize: 1, pageToken: page1.nextPageToken });
      expect(page2.totalSize).toBe(3);
      expect(page2.tasks).toHaveLength(1);
      expect((await v1(dave, path, 'ListTasks', { pageSize: 101 }).catch((error: Error) => error.message))).toMatch(/-32602/);
    });

    it('includes artifacts only when asked', async () => {
      const task = await newTask(alice, carol, 'artifact holder');
      await v1(carol, '/a2a', 'CompleteTask', { id: task.id, artifacts: [{ artifactId: 'x', parts: [{ data: { ok: true } }] }] });
      const path = `/a2a/${carol.agent.handle}`;
      const without = await v1(alice, path, 'ListTasks', {});
      expect(without.tasks.find((entry: Json) => entry.id === task.id)).not.toHaveProperty('artifacts');
      const withArtifacts = await v1(alice, path, 'ListTasks', { includeArtifacts: true });
      expect(withArtifacts.tasks.find((entry: Json) => entry.id === task.id).artifacts).toEqual([{ artifactId: 'x', parts: [{ data: { ok: true } }] }]);
    });

    it('drops histories over the page budget and flags those tasks', async () => {
      const smallBudget = await relay.startEdge({ RELAY_LIST_HISTORY_BUDGET_BYTES: '2048' });
      const frank = await agent('frank');
      const gina = await agent('gina');
      const older = await newTask(frank, gina, 'a'.repeat(1500));
      const newer = await newTask(frank, gina, 'b'.repeat(1500));
      const page = await v1(frank, `/a2a/${gina.agent.handle}`, 'ListTasks', {}, relay.urlOf(smallBudget));
      const [first, second] = page.tasks as Json[];
      expect([first.id, second.id]).toEqual([newer.id, older.id]);
      expect(first.history).toHaveLength(1);
      expect(first.metadata.relay).not.toHaveProperty('historyTruncated');
      expect(second).not.toHaveProperty('history');
      expect(second.metadata.relay.historyTruncated).toBe(true);
      const full = await v1(frank, `/a2a/${gina.agent.handle}`, 'ListTasks', {});
      expect(full.tasks.every((entry: Json) => entry.history?.length === 1)).toBe(true);
    });
  });

  describe('cancel', () => {
    it('lets the creator cancel while submitted, working or input-required, never the recipient', async () => {
      const submitted = await newTask(alice, bob, 'c1');
      expect((await v1(alice, '/a2a', 'CancelTask', { id: submitted.id })).status.state).toBe('TASK_STATE_CANCELED');

      const working = await newTask(alice, bob, 'c2');
      await agentRelay(bob, 'tasks/update', { task_id: working.id, transition: 'accept' });
      const byRecipient = await v1Error(bob, '/a2a', 'CancelTask', { id: working.id });
      expect(byRecipient.code).toBe(-32002);
      expect((await getTask(alice, working.id)).status.state).toBe('TASK_STATE_WORKING');
      const agentRelayCancel = await call(alice, '/a2a', 'tasks/cancel', { task_id: working.id });
      expect(agentRelayCancel.body.error.code).toBe(-32008);
      expect((await v1(alice, '/a2a', 'CancelTask', { id: working.id })).status.state).toBe('TASK_STATE_CANCELED');

      const waiting = await newTask(alice, bob, 'c3');
      await v1(bob, '/a2a', 'UpdateStatus', { id: waiting.id, status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text: 'Which DB?' }] } } });
      expect((await v1(alice, '/a2a', 'CancelTask', { id: waiting.id })).status.state).toBe('TASK_STATE_CANCELED');

      for (const id of [submitted.id, working.id, waiting.id]) expect((await v1Error(alice, '/a2a', 'CancelTask', { id })).code).toBe(-32002);
      const legacy = await call(alice, '/a2a', 'tasks/cancel', { id: submitted.id });
      expect(legacy.body.error.code).toBe(-32002);
    });

    it('tells the worker: a canceled event for the task, once', async () => {
      const collector = await EventCollector.start(relay.subjectPrefix);
      try {
        const task = await newTask(alice, bob, 'cancel after accept');
        await agentRelay(bob, 'tasks/update', { task_id: task.id, transition: 'accept' });
        await v1(alice, `/a2a/${bob.agent.handle}`, 'CancelTask', { id: task.id });
        const canceled = await eventually(() => {
          const events = collector.ofTask(task.id).filter((collected) => collected.event.type === 'canceled');
          expect(events).toHaveLength(1);
          return events[0];
        });
        expect(canceled.subject).toBe(`${relay.subjectPrefix}.relay.events.task.canceled`);
        expect(canceled.event).toMatchObject({ state: 'cancelled', sender: alice.agent.handle, recipient: bob.agent.handle });
      } finally {
        await collector.stop();
      }
    });

    it('answers -32004 to a message for a terminal task', async () => {
      const task = await newTask(alice, bob, 'to be closed');
      await v1(alice, '/a2a', 'CancelTask', { id: task.id });
      const error = await v1Error(alice, '/a2a', 'SendMessage', { message: message('hello?', { taskId: task.id }) });
      expect(error.code).toBe(-32004);
    });
  });

  describe('agent-side methods', () => {
    it('drives a task with UpdateStatus and CompleteTask, artifacts exactly as given in both versions', async () => {
      const task = await newTask(alice, bob, 'build the report');
      const path = `/a2a/${alice.agent.handle}`;
      await v1(bob, path, 'UpdateStatus', { id: task.id, status: { state: 'TASK_STATE_WORKING' }, artifacts: [{ artifactId: 'log', name: 'log', parts: [{ text: 'line 1\n' }], lastChunk: false }] });
      await v1(bob, path, 'tasks/updateStatus', { id: task.id, artifacts: [{ artifact: { artifactId: 'log', parts: [{ text: 'line 2\n' }] }, append: true, lastChunk: true }] });
      const completed = await v1(bob, path, 'CompleteTask', {
        id: task.id,
        artifacts: [
          {
            artifactId: 'report',
            name: 'report',
            description: 'The report',
            parts: [{ text: 'summary', mediaType: 'text/markdown' }, { raw: 'aGVsbG8=', filename: 'r.bin', mediaType: 'application/octet-stream' }, { url: 'https://example.com/r.pdf', filename: 'r.pdf' }, { data: { rows: 3 }, mediaType: 'application/json' }],
            metadata: { generator: 'ci' },
          },
        ],
      });
      expect(completed.status.state).toBe('TASK_STATE_COMPLETED');

      const read = await getTask(alice, task.id);
      expect(read.artifacts).toEqual([
        { artifactId: 'log', name: 'log', parts: [{ text: 'line 1\n' }, { text: 'line 2\n' }] },
        {
          artifactId: 'report',
          name: 'report',
          description: 'The report',
          parts: [{ text: 'summary', mediaType: 'text/markdown' }, { raw: 'aGVsbG8=', filename: 'r.bin', mediaType: 'application/octet-stream' }, { url: 'https://example.com/r.pdf', filename: 'r.pdf' }, { data: { rows: 3 }, mediaType: 'application/json' }],
          metadata: { generator: 'ci' },
        },
      ]);
      const legacy = await call(alice, '/a2a', 'tasks/get', { id: task.id });
      expect(legacy.body.result.status.state).toBe('completed');
      expect(legacy.body.result.artifacts[1].parts).toEqual([
        { kind: 'text', text: 'summary' },
        { kind: 'file', file: { bytes: 'aGVsbG8=', name: 'r.bin', mimeType: 'application/octet-stream' } },
        { kind: 'file', file: { uri: 'https://example.com/r.pdf', name: 'r.pdf' } },
        { kind: 'data', data: { rows: 3 } },
      ]);
    });

    it('maps the reported failed and rejected states to fail and decline', async () => {
      const failing = await newTask(alice, bob, 'will fail');
      await v1(bob, '/a2a', 'UpdateStatus', { id: failing.id, status: { state: 'TASK_STATE_WORKING' } });
      const failed = await v1(bob, '/a2a', 'UpdateStatus', { id: failing.id, status: { state: 'TASK_STATE_FAILED', message: 'The build broke' } });
      expect(failed.status).toMatchObject({ state: 'TASK_STATE_FAILED', message: { role: 'ROLE_AGENT', parts: [{ text: 'The build broke' }] } });

      const declining = await newTask(alice, bob, 'will be rejected');
      const rejected = await call(bob, '/a2a', 'tasks/updateStatus', { id: declining.id, status: { state: 'rejected', message: { kind: 'message', messageId: randomUUID(), role: 'agent', parts: [{ kind: 'text', text: 'Not my area' }] } } });
      expect(rejected.body.result.status).toMatchObject({ state: 'rejected', message: { kind: 'message', role: 'agent' } });
      expect((await getTask(alice, declining.id)).status.state).toBe('TASK_STATE_REJECTED');
    });

    it('carries message metadata as the thread message payload, both ways', async () => {
      const task = await newTask(alice, bob, 'with metadata', { metadata: { ticket: 'OPS-1', nested: { snake_key: true } } });
      expect(task.history[0].metadata).toEqual({ ticket: 'OPS-1', nested: { snake_key: true } });
      const thread = await agentRelay(bob, 'tasks/get', { task_id: task.id });
      expect((thread.messages as Json[])[0].payload).toEqual({ ticket: 'OPS-1', nested: { snake_key: true } });
      await v1(bob, `/a2a/${alice.agent.handle}`, 'SendMessage', { message: message('ack', { taskId: task.id, metadata: { seen: 1 } }), configuration: { returnImmediately: true } });
      const read = await getTask(alice, task.id);
      expect(read.history[1]).toMatchObject({ role: 'ROLE_AGENT', parts: [{ text: 'ack' }], metadata: { seen: 1 } });
      const seenByAlice = await agentRelay(alice, 'tasks/get', { task_id: task.id });
      expect((seenByAlice.messages as Json[])[1]).toMatchObject({ from: bob.agent.handle, body: 'ack', payload: { seen: 1 } });
    });

    it('does not let the sender complete its own task', async () => {
      const task = await newTask(alice, bob, 'not yours to finish');
      const error = await v1Error(alice, '/a2a', 'CompleteTask', { id: task.id });
      expect(error.code).toBe(-32004);
      expect((await getTask(alice, task.id)).status.state).toBe('TASK_STATE_SUBMITTED');
    });

    it('renders typed AgentRelay artifacts as data parts, with the relay metadata', async () => {
      const created = await agentRelay(alice, 'message/send', {
        recipient: bob.agent.handle,
        intent: 'ask_question',
        message: { role: 'user', parts: [{ type: 'text', text: 'typed' }] },
        artifacts: [{ type: 'link', url: 'https://example.com/pr/1', title: 'PR' }],
      });
      const task = await getTask(alice, created.task_id as string);
      expect(task.metadata.relay).toMatchObject({ intent: 'ask_question', proposed_action: null, sender: alice.agent.handle, recipient: bob.agent.handle });
      expect(task.artifacts[0].parts[0].data).toMatchObject({ type: 'link', url: 'https://example.com/pr/1' });
    });
  });

  describe('blocking sends', () => {
    it('returns when the worker asks for input, and again when it completes (through another edge replica)', async () => {
      const replica = await relay.startEdge();
      const first = v1(alice, `/a2a/${bob.agent.handle}`, 'SendMessage', { message: message('blocking question') });
      const taskId = await eventually(async () => {
        const inbox = await agentRelay(bob, 'tasks/list', { filter: { role: 'recipient', status: ['pending'] } });
        const item = (inbox.items as Json[]).find((entry) => entry.summary_preview === 'blocking question');
        if (!item) throw new Error('not yet');
        return item.task_id as string;
      });
      await v1(bob, '/a2a', 'UpdateStatus', { id: taskId, status: { state: 'TASK_STATE_INPUT_REQUIRED', message: 'Which environment?' } }, relay.urlOf(replica));
      const asked = await first;
      expect(asked.task).toMatchObject({ id: taskId, status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { role: 'ROLE_AGENT', parts: [{ text: 'Which environment?' }] } } });

      const second = v1(alice, `/a2a/${bob.agent.handle}`, 'SendMessage', { message: message('staging', { taskId }) });
      await eventually(async () => expect((await getTask(bob, taskId)).status.state).toBe('TASK_STATE_WORKING'));
      await v1(bob, '/a2a', 'CompleteTask', { id: taskId, message: 'Deployed to staging' }, relay.urlOf(replica));
      const done = await second;
      expect(done.task.status.state).toBe('TASK_STATE_COMPLETED');
    });

    it('answers the deadline error with taskId, contextId and the current state', async () => {
      const impatient = await relay.startEdge({ RELAY_BLOCKING_TIMEOUT_MS: '300' });
      const error = await v1Error(alice, `/a2a/${bob.agent.handle}`, 'SendMessage', { message: message('nobody answers') }, relay.urlOf(impatient));
      const info = errorInfo(error);
      expect(info.metadata).toMatchObject({ state: 'TASK_STATE_SUBMITTED' });
      expect((await getTask(alice, info.metadata.taskId)).contextId).toBe(info.metadata.contextId);

      const legacy = await call(alice, `/a2a/${bob.agent.handle}`, 'message/send', { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'still nobody' }] } }, undefined, relay.urlOf(impatient));
      expect(legacy.body.error.data).toMatchObject({ state: 'submitted', taskId: expect.any(String), contextId: expect.any(String) });
      expect(legacy.body.error.code).toBe(error.code);
    });
  });

  describe('BOLA: another pair’s task is not found, whatever the method, and nothing changes', () => {
    it('answers -32001 to every method from a stranger', async () => {
      const task = await newTask(alice, bob, 'private work');
      const paths = ['/a2a', `/a2a/${bob.agent.handle}`, `/a2a/${alice.agent.handle}`];
      for (const path of paths) {
        for (const [method, params] of [
          ['SendMessage', { message: message('intrude', { taskId: task.id }), configuration: { returnImmediately: true } }],
          ['GetTask', { id: task.id }],
          ['CancelTask', { id: task.id }],
          ['CompleteTask', { id: task.id }],
          ['UpdateStatus', { id: task.id, status: { state: 'TASK_STATE_WORKING', message: 'mine now' } }],
        ] as const) {
          const error = await v1Error(carol, path, method, params);
          expect([method, path, error.code]).toEqual([method, path, -32001]);
        }
        for (const [method, params] of [
          ['message/send', { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'x' }], taskId: task.id }, configuration: { blocking: false } }],
          ['tasks/get', { id: task.id }],
          ['tasks/cancel', { id: task.id }],
        ] as const) {
          const { body } = await call(carol, path, method, params);
          expect([method, path, body.error?.code]).toEqual([method, path, -32001]);
        }
        const listed = await v1(carol, path, 'ListTasks', {});
        expect(listed.tasks.map((entry: Json) => entry.id)).not.toContain(task.id);
      }
      // Alice's own task, asked at the endpoint of an agent it does not involve, is not found either.
      expect((await v1Error(alice, `/a2a/${carol.agent.handle}`, 'GetTask', { id: task.id })).code).toBe(-32001);

      const after = await getTask(alice, task.id);
      expect(after.status.state).toBe('TASK_STATE_SUBMITTED');
      expect(after.history).toHaveLength(1);
      expect(after).not.toHaveProperty('artifacts');
    });
  });
  describe('streaming over SSE', () => {
    type Stream = SseStream & { id: number };

    async function stream(agent: RegisteredTestAgent, path: string, method: string, params: unknown, version?: string): Promise<Stream> {
      const id = ++sequence;
      const opened = await openSse(`${relay.url}${path}`, { 'x-api-key': agent.api_key, ...(version !== undefined ? { 'a2a-version': version } : {}) }, { jsonrpc: '2.0', id, method, params });
      return Object.assign(opened, { id });
    }

    /** The next event, a plain data event repeating the request id; returns its result. */
    async function expectNext(events: Stream): Promise<Json> {
      const event = (await events.next()) as SseEvent;
      expect(event).toBeDefined();
      expect(event.event).toBeUndefined();
      expect(event.data).toMatchObject({ jsonrpc: '2.0', id: events.id });
      return event.data.result as Json;
    }

    it('SendStreamingMessage (v1.0): the Task, then a status update per change and artifact updates, closed once terminal', async () => {
      const events = await stream(alice, `/a2a/${bob.agent.handle}`, 'SendStreamingMessage', { message: message('stream me') }, '1.0');
      expect(events.status).toBe(200);
      expect(events.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(events.headers.get('cache-control')).toBe('no-cache');
      expect(events.headers.get('x-accel-buffering')).toBe('no');
      expect(events.headers.get('x-ratelimit-limit')).not.toBeNull();
      const first = await expectNext(events);
      expect(first.task).toMatchObject({ status: { state: 'TASK_STATE_SUBMITTED' }, history: [{ role: 'ROLE_USER', parts: [{ text: 'stream me' }] }] });
      const task = first.task as Json;

      await v1(bob, `/a2a/${alice.agent.handle}`, 'UpdateStatus', { id: task.id, status: { state: 'TASK_STATE_WORKING' } });
      expect(await expectNext(events)).toEqual({ statusUpdate: { taskId: task.id, contextId: task.contextId, status: { state: 'TASK_STATE_WORKING', timestamp: expect.any(String), message: expect.any(Object) } } });

      await v1(bob, `/a2a/${alice.agent.handle}`, 'CompleteTask', { id: task.id, message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text: 'done' }] }, artifacts: [{ artifactId: 'out', name: 'out', parts: [{ text: 'result' }] }] });
      const rest = await events.rest();
      expect(rest.map((event) => event.event)).toEqual([undefined, undefined]);
      expect(rest[0].data.result).toEqual({ artifactUpdate: { taskId: task.id, contextId: task.contextId, artifact: { artifactId: 'out', name: 'out', parts: [{ text: 'result' }] }, lastChunk: true } });
      expect(rest[1].data.result.statusUpdate).toMatchObject({ taskId: task.id, status: { state: 'TASK_STATE_COMPLETED', message: { role: 'ROLE_AGENT', parts: [{ text: 'done' }] } } });
      expect(rest[1].data.result.statusUpdate).not.toHaveProperty('final');
    });

    it('message/stream (v0.3): kind-tagged events, final: true on the terminal update', async () => {
      const events = await stream(alice, `/a2a/${bob.agent.handle}`, 'message/stream', {
        message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'v0.3 stream' }] },
      });
      const task = await expectNext(events);
      expect(task).toMatchObject({ kind: 'task', status: { state: 'submitted' }, history: [{ kind: 'message', parts: [{ kind: 'text', text: 'v0.3 stream' }] }] });
      await agentRelay(bob, 'tasks/update', { task_id: task.id, transition: 'accept' });
      expect(await expectNext(events)).toMatchObject({ kind: 'status-update', taskId: task.id, contextId: task.contextId, status: { state: 'working' }, final: false });
      await agentRelay(bob, 'tasks/update', { task_id: task.id, transition: 'complete' });
      const rest = await events.rest();
      expect(rest.map((event) => event.data.result)).toEqual([expect.objectContaining({ kind: 'status-update', status: expect.objectContaining({ state: 'completed' }), final: true })]);
    });

    it('closes the stream when the task asks for input', async () => {
      const events = await stream(alice, `/a2a/${bob.agent.handle}`, 'SendStreamingMessage', { message: message('ask me') }, '1.0');
      const task = ((await expectNext(events)).task as Json);
      await v1(bob, `/a2a/${alice.agent.handle}`, 'UpdateStatus', { id: task.id, status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text: 'which one?' }] } } });
      // Accepted on the way (the agent reported input-required on a submitted task), then input-required, then closed.
      const rest = await events.rest();
      expect(rest.map((event) => event.data.result.statusUpdate?.status.state).at(-1)).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(rest.at(-1)?.data.result.statusUpdate.status.message).toMatchObject({ role: 'ROLE_AGENT', parts: [{ text: 'which one?' }] });

      // The answer continues the task on a new stream, which follows it to completion.
      const answer = await stream(alice, `/a2a/${bob.agent.handle}`, 'SendStreamingMessage', { message: message('the second', { taskId: task.id }) }, '1.0');
      expect(((await expectNext(answer)).task as Json).status.state).toBe('TASK_STATE_WORKING');
      await v1(bob, `/a2a/${alice.agent.handle}`, 'CompleteTask', { id: task.id });
      expect((await answer.rest()).map((event) => event.data.result.statusUpdate?.status.state)).toEqual(['TASK_STATE_COMPLETED']);
    });

    it('SubscribeToTask and tasks/resubscribe start from the current Task and follow it', async () => {
      const task = await newTask(alice, bob, 'follow me');
      const v1Events = await stream(alice, `/a2a/${bob.agent.handle}`, 'SubscribeToTask', { id: task.id }, '1.0');
      expect(((await expectNext(v1Events)).task as Json)).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_SUBMITTED' } });
      const legacy = await stream(bob, '/a2a', 'tasks/resubscribe', { id: task.id });
      expect(await expectNext(legacy)).toMatchObject({ kind: 'task', id: task.id, status: { state: 'submitted' } });
      await agentRelay(bob, 'tasks/update', { task_id: task.id, transition: 'accept' });
      await agentRelay(bob, 'tasks/update', { task_id: task.id, transition: 'complete' });
      const v1States = (await v1Events.rest()).map((event) => event.data.result.statusUpdate.status.state);
      expect(v1States.at(-1)).toBe('TASK_STATE_COMPLETED');
      expect(v1States.every((state, index) => index === 0 || state !== v1States[index - 1])).toBe(true);
      const legacyUpdates = (await legacy.rest()).map((event) => event.data.result);
      expect(legacyUpdates.at(-1)).toMatchObject({ kind: 'status-update', status: { state: 'completed' }, final: true });
      expect(legacyUpdates.slice(0, -1).every((update) => update.final === false)).toBe(true);
    });

    it('answers resubscribe on a terminal task with -32004 and on another pair\'s task with -32001, as plain JSON', async () => {
      const task = await newTask(alice, bob, 'soon over');
      await v1(alice, '/a2a', 'CancelTask', { id: task.id });
      const terminal = await stream(alice, `/a2a/${bob.agent.handle}`, 'SubscribeToTask', { id: task.id }, '1.0');
      expect(terminal.headers.get('content-type')).toMatch(/^application\/json/);
      expect(terminal.json?.error.code).toBe(-32004);
      const legacyTerminal = await stream(alice, '/a2a', 'tasks/resubscribe', { id: task.id });
      expect(legacyTerminal.json?.error.code).toBe(-32004);

      const open = await newTask(alice, bob, 'not yours');
      for (const [path, method, version] of [[`/a2a/${bob.agent.handle}`, 'SubscribeToTask', '1.0'], ['/a2a', 'SubscribeToTask', '1.0'], ['/a2a', 'tasks/resubscribe', undefined]] as const) {
        const foreign = await stream(carol, path, method, { id: open.id }, version);
        expect([method, foreign.json?.error.code]).toEqual([method, -32001]);
      }
    });

    it('answers an invalid streaming send with a plain JSON-RPC error', async () => {
      const invalid = await stream(alice, '/a2a', 'SendStreamingMessage', { message: message('to whom?') }, '1.0');
      expect(invalid.status).toBe(200);
      expect(invalid.json?.error.code).toBe(-32602);
    });

    it('closes a stream after RELAY_STREAM_MAX_MS even when the task has not settled', async () => {
      const bounded = await RelayHarness.start({ env: { RELAY_STREAM_MAX_MS: '1000' } });
      try {
        const from = await registerAgent(bounded, { handle: uniqueHandle('dora', org), name: 'Dora' });
        const to = await registerAgent(bounded, { handle: uniqueHandle('eve', org), name: 'Eve' });
        const startedAt = Date.now();
        const id = ++sequence;
        const events = await openSse(`${bounded.url}/a2a/${to.agent.handle}`, { 'x-api-key': from.api_key, 'a2a-version': '1.0' }, { jsonrpc: '2.0', id, method: 'SendStreamingMessage', params: { message: message('never done') } });
        const rest = await events.rest();
        expect(rest.map((event) => event.data.result.task?.status.state)).toEqual(['TASK_STATE_SUBMITTED']);
        expect(Date.now() - startedAt).toBeGreaterThanOrEqual(900);
      } finally {
        await bounded.stop();
      }
    });

    it('stops following the task when the client hangs up', async () => {
      const waiter = relay.edge.get(TaskEventWaiter);
      const before = waiter.activeListeners;
      const events = await stream(alice, `/a2a/${bob.agent.handle}`, 'SendStreamingMessage', { message: message('hang up') }, '1.0');
      await expectNext(events);
      expect(waiter.activeListeners).toBe(before + 1);
      events.close();
      await eventually(() => expect(waiter.activeListeners).toBe(before));
    });
  });
});
