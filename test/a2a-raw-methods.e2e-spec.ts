import { randomUUID } from 'node:crypto';
import { A2aRawClient, message } from './support/a2a-raw';
import type { RegisteredTestAgent } from './support/agents';
import { expectRpcError, type Json } from './support/json-rpc';

/**
 * Raw JSON-RPC against the standard A2A surface: both spellings of every method under each version
 * header, addressing of the two endpoints, and BOLA (another pair's task is not found by any method).
 */
describe('A2A JSON-RPC, raw', () => {
  const raw = new A2aRawClient();
  const { call, v1, v1Error, newTask, getTask, agent } = raw;
  const org = raw.org;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let carol: RegisteredTestAgent;

  beforeAll(async () => {
    await raw.start();
    alice = await agent('alice');
    bob = await agent('bob');
    carol = await agent('carol');
  });

  afterAll(async () => {
    await raw.stop();
  });

  describe('both spellings of every method, shaped by the version header', () => {
    it.each([
      ['SendMessage', undefined],
      ['message/send', undefined],
      ['SendMessage', '0.3'],
      ['message/send', '0.3'],
    ])('%s with A2A-Version %p answers a bare v0.3 Task', async (method, version) => {
      const { body } = await call(
        alice,
        `/a2a/${bob.agent.handle}`,
        method,
        {
          message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'v0.3 hello' }] },
          configuration: { blocking: false },
        },
        version,
      );
      expect(body.error).toBeUndefined();
      expect(body.result).toMatchObject({
        kind: 'task',
        status: { state: 'submitted' },
        history: [{ kind: 'message', role: 'user', parts: [{ kind: 'text', text: 'v0.3 hello' }] }],
      });
      expect(body.result.metadata.relay).toMatchObject({ sender: alice.agent.handle, recipient: bob.agent.handle });
    });

    it.each([
      ['SendMessage', '1.0'],
      ['message/send', '1.0'],
      ['SendMessage', '1.0.2'],
    ])('%s with A2A-Version %s answers {task} in ProtoJSON', async (method, version) => {
      const { body } = await call(
        alice,
        `/a2a/${bob.agent.handle}`,
        method,
        { message: message('v1 hello'), configuration: { returnImmediately: true } },
        version,
      );
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
      const result = await v1(bob, `/a2a/${alice.agent.handle}`, method, {
        id: task.id,
        artifacts: [{ artifactId: 'a1', name: 'answer', parts: [{ text: 'Done!' }] }],
      });
      expect(result.status.state).toBe('TASK_STATE_COMPLETED');
      expect(result.artifacts).toEqual([{ artifactId: 'a1', name: 'answer', parts: [{ text: 'Done!' }] }]);
    });

    it.each(['UpdateStatus', 'tasks/updateStatus'])('%s lets the recipient report progress', async (method) => {
      const task = await newTask(alice, bob, 'work on me');
      const result = await v1(bob, `/a2a/${alice.agent.handle}`, method, {
        id: task.id,
        status: { state: 'TASK_STATE_WORKING', message: 'Processing step 2 of 5...' },
      });
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
      expectRpcError(error, { code: -32602, field: 'recipient', shape: 'error-info' });

      const viaMetadata = await v1(alice, '/a2a', 'SendMessage', {
        message: message('to bob', { metadata: { recipient: bob.agent.handle } }),
        configuration: { returnImmediately: true },
      });
      expect(viaMetadata.task.metadata.relay.recipient).toBe(bob.agent.handle);
      const viaParam = await v1(alice, '/a2a/', 'SendMessage', {
        recipient: bob.agent.handle,
        message: message('to bob again'),
        configuration: { returnImmediately: true },
      });
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
          [
            'message/send',
            {
              message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'x' }], taskId: task.id },
              configuration: { blocking: false },
            },
          ],
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
});
