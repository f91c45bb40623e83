import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { TEST_ADMIN_TOKEN, RelayHarness } from './support/relay-harness';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Input an attacker controls never reaches a store it would break (500): U+0000 anywhere, deep
 * nesting, forged page tokens and upper-case URL schemes are answered with the precise 4xx or
 * -32602, and in the A2A dialects a task the caller may not see cannot be told from one that does
 * not exist.
 */
describe('hostile input', () => {
  let relay: RelayHarness;
  let org: string;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let carol: RegisteredTestAgent;

  /** One raw JSON-RPC call; the body is sent as given (a string is sent as it is). */
  async function post(agent: RegisteredTestAgent, path: string, body: unknown, version?: string): Promise<{ status: number; text: string; body: Json }> {
    const http = request(relay.url).post(path).set('x-api-key', agent.api_key).set('content-type', 'application/json');
    if (version !== undefined) http.set('a2a-version', version);
    const response = await http.send(typeof body === 'string' ? body : JSON.stringify(body));
    return { status: response.status, text: response.text, body: response.body as Json };
  }

  function call(
    agent: RegisteredTestAgent,
    path: string,
    method: string,
    params: unknown,
    version?: string,
  ): Promise<{ status: number; text: string; body: Json }> {
    return post(agent, path, { jsonrpc: '2.0', id: 'probe', method, params }, version);
  }

  function admin(method: 'get' | 'post' | 'patch' | 'put', path: string): request.Test {
    return request(relay.url)[method](path).set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`);
  }

  /** A JSON text of `depth` nested objects around a string. */
  function deeplyNested(depth: number): string {
    return `${'{"a":'.repeat(depth)}"leaf"${'}'.repeat(depth)}`;
  }

  async function newTask(from: RegisteredTestAgent, to: RegisteredTestAgent): Promise<Json> {
    const sent = await call(
      from,
      `/a2a/${to.agent.handle}`,
      'SendMessage',
      { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'work' }] }, configuration: { returnImmediately: true } },
      '1.0',
    );
    if (sent.status !== 200 || sent.body.error) throw new Error(`SendMessage answered ${sent.status}: ${sent.text}`);
    return sent.body.result.task as Json;
  }

  beforeAll(async () => {
    relay = await RelayHarness.start();
    org = `hostile${Math.random().toString(36).slice(2, 7)}`;
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
    carol = await registerAgent(relay, { handle: uniqueHandle('carol', org), name: 'Carol' });
  });

  afterAll(async () => {
    await relay?.stop();
  });

  describe('U+0000', () => {
    it.each([
      [
        'AgentRelay message text',
        'message/send',
        { recipient: 'BOB', intent: 'inform', message: { role: 'user', parts: [{ type: 'text', text: 'a\u0000b' }] } },
        undefined,
        'message.parts[0].text',
      ],
      ['A2A v1.0 messageId', 'SendMessage', { message: { messageId: 'm\u0000', role: 'ROLE_USER', parts: [{ text: 'x' }] } }, '1.0', 'message.messageId'],
      [
        'a metadata key',
        'SendMessage',
        { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'x' }], metadata: { 'k\u0000': 1 } } },
        '1.0',
        'message.metadata',
      ],
      [
        'a metadata value',
        'message/send',
        { recipient: 'BOB', intent: 'inform', message: { role: 'user', parts: [{ type: 'text', text: 'x' }] }, metadata: { deep: ['ok', '\u0000'] } },
        undefined,
        'metadata.deep[1]',
      ],
      ['a looked-up task id', 'tasks/get', { task_id: '01HXYZ4K2VNJQP7R8MWDB3CS\u0000F' }, undefined, 'task_id'],
      ['an A2A task id', 'GetTask', { id: 'x\u0000' }, '1.0', 'id'],
    ])('in %s is -32602 naming the field', async (_label, method, params, version, field) => {
      const body = JSON.parse(JSON.stringify(params).replaceAll('"BOB"', JSON.stringify(bob.agent.handle)));
      // Sends go to Bob's endpoint, so that nothing but the U+0000 is wrong with them.
      const response = await call(alice, method === 'SendMessage' ? `/a2a/${bob.agent.handle}` : '/a2a', method, body, version);
      expect(response.status).toBe(200);
      expect(response.body.id).toBe('probe');
      expect(response.body.error.code).toBe(-32602);
      const data = version === '1.0' ? response.body.error.data[0].metadata : response.body.error.data;
      expect(data.field).toBe(field);
      expect(response.body.error.message).toContain('U+0000');
    });

    it('in the handle of POST /a2a/{handle} is -32602 naming handle', async () => {
      const response = await call(alice, `/a2a/bob%00@${org}`, 'tasks/get', { id: 'x' });
      expect(response.status).toBe(200);
      expect(response.body.error).toMatchObject({ code: -32602, data: { field: 'handle' } });
    });

    it('in admin fields, path params and queries is 400 naming the field', async () => {
      const created = await admin('post', '/admin/agents').send({ handle: uniqueHandle('nul', org), name: 'N\u0000' });
      expect(created.status).toBe(400);
      expect(created.body.error).toMatchObject({ reason: 'invalid_params', fields: [{ field: 'name' }] });
      const metadata = await admin('patch', `/admin/agents/${encodeURIComponent(alice.agent.handle)}`).send({ metadata: { note: '\u0000' } });
      expect(metadata.status).toBe(400);
      expect(metadata.body.error.fields[0].field).toBe('metadata.note');
      for (const path of [`/admin/agents/alice%00@${org}`, `/admin/agents/alice%00@${org}/keys`, `/admin/agents?q=%00`, `/admin/deliveries?task_id=%00`]) {
        const response = await admin('get', path);
        expect([path, response.status]).toEqual([path, 400]);
        expect(response.body.error.reason).toBe('invalid_params');
      }
      const yaml = await admin('put', `/admin/agents/${encodeURIComponent(alice.agent.handle)}/trust`)
        .set('content-type', 'application/yaml')
        .send('allow:\n  - "*@x\\0y"\n');
      expect(yaml.status).toBe(400);
      expect(yaml.body.error.fields[0].field).toBe('allow[0]');
    });

    it('in a public card lookup is 400', async () => {
      expect((await request(relay.url).get('/.well-known/agent-card.json?id=a%00@b')).status).toBe(400);
      const card = await request(relay.url).get('/a2a/a%00@b/.well-known/agent-card.json');
      expect(card.status).toBe(400);
      expect(card.body.error).toMatchObject({ reason: 'invalid_params', fields: [{ field: 'handle' }] });
    });
  });

  describe('nesting, page tokens and URL schemes', () => {
    it('answers JSON nested 3,000 levels with -32602 at the JSON-RPC endpoint and 400 at the admin API', async () => {
      const send = `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":${deeplyNested(3000)}}}}`;
      const response = await post(alice, '/a2a', send, '1.0');
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ id: 7, error: { code: -32602, message: expect.stringContaining('deeper than 64 levels') } });
      expect(response.body.error.data[0].metadata.field).toMatch(/^message\.metadata(\.a)+$/);

      const agent = await admin('patch', `/admin/agents/${encodeURIComponent(alice.agent.handle)}`)
        .set('content-type', 'application/json')
        .send(`{"metadata":${deeplyNested(3000)}}`);
      expect(agent.status).toBe(400);
      expect(agent.body.error.message).toContain('deeper than 64 levels');
    });

    it('answers a forged ListTasks pageToken with -32602 naming pageToken', async () => {
      await newTask(alice, bob);
      await newTask(alice, bob);
      const first = await call(alice, '/a2a', 'ListTasks', { pageSize: 1 }, '1.0');
      expect(first.body.result.nextPageToken).not.toBe('');
      const cursor = (statusKey: string): string => Buffer.from(JSON.stringify(['status', '01HXYZ4K2VNJQP7R8MWDB3CSTF', statusKey])).toString('base64url');
      for (const forgedCursor of [cursor('1'), cursor('2026-02-31T00:00:00.000000Z'), cursor('Tue, 1 Jan 2030'), 'garbage']) {
        const pageToken = Buffer.from(JSON.stringify({ c: forgedCursor, t: 2 })).toString('base64url');
        const response = await call(alice, '/a2a', 'ListTasks', { pageSize: 1, pageToken }, '1.0');
        expect([forgedCursor, response.status, response.body.error?.code]).toEqual([forgedCursor, 200, -32602]);
        expect(response.body.error.data[0].metadata.field).toBe('pageToken');
      }
    });

    it('answers an upper-case URL scheme with 400 (admin) and -32602 (push config)', async () => {
      const created = await admin('post', '/admin/agents').send({
        handle: uniqueHandle('upper', org),
        name: 'U',
        notification_webhook_url: 'HTTP://example.com/hook',
      });
      expect(created.status).toBe(400);
      expect(created.body.error.fields).toEqual([{ field: 'notification_webhook_url', messages: [expect.stringContaining('lowercase')] }]);
      const updated = await admin('patch', `/admin/agents/${encodeURIComponent(alice.agent.handle)}`).send({
        slack_webhook_url: 'HTTPS://hooks.example.com/x',
      });
      expect(updated.status).toBe(400);
      expect(updated.body.error.fields[0].field).toBe('slack_webhook_url');

      const task = await newTask(alice, bob);
      const push = await call(alice, '/a2a', 'CreateTaskPushNotificationConfig', { taskId: task.id, url: 'HTTP://example.com/push' }, '1.0');
      expect(push.body.error).toMatchObject({ code: -32602 });
      expect(push.body.error.data[0].metadata.field).toBe('params.url');
      const legacy = await call(alice, '/a2a', 'tasks/pushNotificationConfig/set', {
        taskId: task.id,
        pushNotificationConfig: { url: 'Https://example.com/push' },
      });
      expect(legacy.body.error).toMatchObject({ code: -32602 });
    });
  });

  describe('existence oracle in the A2A dialects', () => {
    it('answers a stranger identically for a task it does not take part in and for one that does not exist', async () => {
      const task = await newTask(alice, bob);
      const missing = '01HXYZ4K2VNJQP7R8MWDB3CSTF';
      const probes: Array<[string, string, (id: string) => Json, string | undefined]> = [
        ['/a2a', 'GetTask', (id) => ({ id }), '1.0'],
        ['/a2a', 'CancelTask', (id) => ({ id }), '1.0'],
        ['/a2a', 'SendMessage', (id) => ({ message: { messageId: 'probe-msg', role: 'ROLE_USER', parts: [{ text: 'x' }], taskId: id } }), '1.0'],
        ['/a2a', 'ListTaskPushNotificationConfigs', (id) => ({ taskId: id }), '1.0'],
        ['/a2a', 'GetTaskPushNotificationConfig', (id) => ({ taskId: id, id: 'cfg' }), '1.0'],
        [`/a2a/${bob.agent.handle}`, 'GetTask', (id) => ({ id }), '1.0'],
        ['/a2a', 'tasks/get', (id) => ({ id }), undefined],
        ['/a2a', 'tasks/cancel', (id) => ({ id }), undefined],
        ['/a2a', 'tasks/pushNotificationConfig/list', (id) => ({ id }), undefined],
        [
          '/a2a',
          'message/send',
          (id) => ({ message: { kind: 'message', messageId: 'probe-msg', role: 'user', parts: [{ kind: 'text', text: 'x' }], taskId: id } }),
          undefined,
        ],
      ];
      for (const [path, method, params, version] of probes) {
        const existing = await call(carol, path, method, params(task.id as string), version);
        const absent = await call(carol, path, method, params(missing), version);
        expect([method, existing.body.error?.code]).toEqual([method, -32001]);
        expect([method, version, existing.status, existing.text]).toEqual([method, version, absent.status, absent.text]);
      }
      // The AgentRelay dialect keeps its two codes.
      expect((await call(carol, '/a2a', 'tasks/get', { task_id: task.id })).body.error.code).toBe(-32005);
      expect((await call(carol, '/a2a', 'tasks/get', { task_id: missing })).body.error.code).toBe(-32006);
    });
  });
});
