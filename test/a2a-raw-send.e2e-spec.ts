import { randomUUID } from 'node:crypto';
import { A2aRawClient, errorInfo, message } from './support/a2a-raw';
import { eventually } from './support/eventually';
import type { RegisteredTestAgent } from './support/agents';
import { expectRpcError, type Json } from './support/json-rpc';
import type { RelayHarness } from './support/relay-harness';

/**
 * Raw JSON-RPC against the standard A2A surface, the send family: contexts and their limit,
 * messageId idempotency, and blocking sends.
 */
describe('A2A JSON-RPC, raw', () => {
  const raw = new A2aRawClient();
  const { call, v1, v1Error, newTask, agentRelay, getTask, agent } = raw;
  let relay: RelayHarness;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let carol: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await raw.start();
    alice = await agent('alice');
    bob = await agent('bob');
    carol = await agent('carol');
  });

  afterAll(async () => {
    await raw.stop();
  });

  describe('contexts', () => {
    it('continues a task, adds a sibling with contextId only, and lets the worker open a reverse sibling', async () => {
      const first = await newTask(alice, bob, 'context root');
      const appended = await v1(alice, `/a2a/${bob.agent.handle}`, 'SendMessage', {
        message: message('more', { taskId: first.id }),
        configuration: { returnImmediately: true },
      });
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
      const { body } = await call(
        alice,
        `/a2a/${bob.agent.handle}`,
        'SendMessage',
        { message: message('wrong context', { taskId: task.id, contextId: other.contextId }), configuration: { returnImmediately: true } },
        '1.0',
      );
      expectRpcError(body.error, { code: -32602, field: 'message.contextId', shape: 'error-info' });
      expect((await getTask(alice, task.id)).history).toHaveLength(1);

      const intruder = await call(
        carol,
        `/a2a/${bob.agent.handle}`,
        'SendMessage',
        { message: message('let me in', { contextId: task.contextId }), configuration: { returnImmediately: true } },
        '1.0',
      );
      expectRpcError(intruder.body.error, { code: -32602, field: 'message.contextId', shape: 'error-info' });
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
      const error = await v1Error(hana, `/a2a/${ivan.agent.handle}`, 'SendMessage', {
        message: message('task 101', { contextId: root.contextId }),
        configuration: { returnImmediately: true },
      });
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

      const error = await v1Error(alice, `/a2a/${bob.agent.handle}`, 'SendMessage', {
        ...params,
        message: { ...params.message, parts: [{ text: 'something else' }] },
      });
      expect(error.code).toBe(-32602);
      const legacy = await call(alice, `/a2a/${bob.agent.handle}`, 'message/send', {
        message: { kind: 'message', messageId, role: 'user', parts: [{ kind: 'text', text: 'something else' }] },
        configuration: { blocking: false },
      });
      expect(legacy.body.error.code).toBe(-32602);
    });
  });

  describe('blocking sends', () => {
    it('returns when the worker asks for input, and again when it completes (through another edge replica)', async () => {
      const replica = await relay.startEdge();
      const first = v1(alice, `/a2a/${bob.agent.handle}`, 'SendMessage', { message: message('blocking question') });
      const taskId = await eventually(async () => {
        const inbox = await agentRelay(bob, 'tasks/list', { filter: { role: 'recipient', status: ['pending'] } });
        const items = inbox.items as Json[];
        expect(items.map((entry) => entry.summary_preview)).toContain('blocking question');
        return items.find((entry) => entry.summary_preview === 'blocking question')!.task_id as string;
      });
      await v1(
        bob,
        '/a2a',
        'UpdateStatus',
        { id: taskId, status: { state: 'TASK_STATE_INPUT_REQUIRED', message: 'Which environment?' } },
        relay.urlOf(replica),
      );
      const asked = await first;
      expect(asked.task).toMatchObject({
        id: taskId,
        status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { role: 'ROLE_AGENT', parts: [{ text: 'Which environment?' }] } },
      });

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

      const legacy = await call(
        alice,
        `/a2a/${bob.agent.handle}`,
        'message/send',
        { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'still nobody' }] } },
        undefined,
        relay.urlOf(impatient),
      );
      expect(legacy.body.error.data).toMatchObject({ state: 'submitted', taskId: expect.any(String), contextId: expect.any(String) });
      expect(legacy.body.error.code).toBe(error.code);
    });
  });
});
