import request from 'supertest';
import type { RegisteredTestAgent } from './support/agents';
import { A2aRawClient, message } from './support/a2a-raw';
import type { Json } from './support/json-rpc';
import { openSse } from './support/sse';

const raw = new A2aRawClient();
const { agent, newTask, agentRelay } = raw;

/** The google.rpc.Status of an HTTP+JSON error, checked for its shape; returns its ErrorInfo. */
function expectStatus(body: Json, code: number, status: string, reason: string): Json {
  expect(body.error).toMatchObject({ code, status, message: expect.any(String) });
  const info = (body.error.details as Json[]).find((detail) => detail['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo');
  expect(info).toMatchObject({ reason, domain: 'a2a-protocol.org' });
  return info as Json;
}

describe('A2A HTTP+JSON binding (raw HTTP)', () => {
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let carol: RegisteredTestAgent;
  const base = (endpoint: RegisteredTestAgent): string => `/a2a/${endpoint.agent.handle}`;
  const http = () => request(raw.relay.url);

  beforeAll(async () => {
    await raw.start();
    [alice, bob, carol] = await Promise.all([agent('alice'), agent('bob'), agent('carol')]);
  });

  afterAll(async () => {
    await raw.stop();
  });

  it('answers every route with application/json, the same task model as JSON-RPC', async () => {
    const sent = await http()
      .post(`${base(bob)}/message:send`)
      .set('x-api-key', alice.api_key)
      .set('a2a-version', '1.0')
      .send({ message: message('Refactor the users API'), configuration: { returnImmediately: true } });
    expect(sent.status).toBe(200);
    expect(sent.headers['content-type']).toMatch(/^application\/json/);
    expect(sent.headers['x-ratelimit-limit']).toBeDefined();
    const task = sent.body.task as Json;
    expect(task).toMatchObject({ status: { state: 'TASK_STATE_SUBMITTED' }, metadata: { relay: { sender: alice.agent.handle, recipient: bob.agent.handle } } });

    const viaJsonRpc = await raw.getTask(alice, task.id);
    const got = await http()
      .get(`${base(bob)}/tasks/${task.id}`)
      .set('x-api-key', alice.api_key)
      .expect(200);
    expect(got.body).toEqual(viaJsonRpc);
    const short = await http()
      .get(`${base(bob)}/tasks/${task.id}?historyLength=0`)
      .set('x-api-key', alice.api_key)
      .expect(200);
    expect(short.body).not.toHaveProperty('history');

    const listed = await http()
      .get(`${base(bob)}/tasks?pageSize=5&status=TASK_STATE_SUBMITTED&includeArtifacts=true`)
      .set('x-api-key', alice.api_key)
      .expect(200);
    expect(listed.body).toMatchObject({ pageSize: 5, totalSize: 1, nextPageToken: '' });
    expect((listed.body.tasks as Json[]).map((entry) => entry.id)).toEqual([task.id]);

    const config = await http()
      .post(`${base(bob)}/tasks/${task.id}/pushNotificationConfigs`)
      .set('x-api-key', alice.api_key)
      .send({ id: 'cfg-raw', url: 'https://hooks.example.com/a2a' })
      .expect(200);
    expect(config.body).toEqual({ id: 'cfg-raw', taskId: task.id, url: 'https://hooks.example.com/a2a' });
    await http()
      .get(`${base(bob)}/tasks/${task.id}/pushNotificationConfigs/cfg-raw`)
      .set('x-api-key', alice.api_key)
      .expect(200, config.body);
    await http()
      .get(`${base(bob)}/tasks/${task.id}/pushNotificationConfigs`)
      .set('x-api-key', alice.api_key)
      .expect(200, { configs: [config.body], nextPageToken: '' });
    await http()
      .delete(`${base(bob)}/tasks/${task.id}/pushNotificationConfigs/cfg-raw`)
      .set('x-api-key', alice.api_key)
      .expect(200, {});
    const gone = await http()
      .get(`${base(bob)}/tasks/${task.id}/pushNotificationConfigs/cfg-raw`)
      .set('x-api-key', alice.api_key)
      .expect(404);
    expectStatus(gone.body, 404, 'NOT_FOUND', 'TASK_NOT_FOUND');

    const card = await http()
      .get(`${base(bob)}/extendedAgentCard`)
      .set('x-api-key', alice.api_key)
      .expect(200);
    expect(card.body).toMatchObject({ name: 'Bob', capabilities: { extendedAgentCard: true } });

    const canceled = await http()
      .post(`${base(bob)}/tasks/${task.id}:cancel`)
      .set('x-api-key', alice.api_key)
      .expect(200);
    expect(canceled.body).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_CANCELED' } });
    const again = await http()
      .post(`${base(bob)}/tasks/${task.id}:cancel`)
      .set('x-api-key', alice.api_key)
      .expect(409);
    expectStatus(again.body, 409, 'FAILED_PRECONDITION', 'TASK_NOT_CANCELABLE');
  });

  it('reads snake_case request fields (ProtoJSON) and answers in camelCase', async () => {
    const sent = await http()
      .post(`${base(bob)}/message:send`)
      .set('x-api-key', alice.api_key)
      .send({
        message: { message_id: 'snake-1', role: 'ROLE_USER', parts: [{ text: 'snake' }] },
        configuration: { return_immediately: true, history_length: 0 },
      })
      .expect(200);
    expect(sent.body.task).not.toHaveProperty('history');
    const id = sent.body.task.id as string;
    const listed = await http()
      .get(`${base(bob)}/tasks?page_size=1&history_length=1`)
      .set('x-api-key', alice.api_key)
      .expect(200);
    expect(listed.body.tasks[0]).toMatchObject({ id, contextId: expect.any(String), history: [{ messageId: 'snake-1' }] });
  });

  it('streams POST /message:stream and POST /tasks/{id}:subscribe as bare StreamResponse events', async () => {
    const events = await openSse(`${raw.relay.url}${base(bob)}/message:stream`, { 'x-api-key': alice.api_key }, { message: message('stream raw') });
    expect(events.status).toBe(200);
    expect(events.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const first = await events.next();
    expect(first?.event).toBeUndefined();
    expect(first?.data).not.toHaveProperty('jsonrpc');
    expect(first?.data.task).toMatchObject({ status: { state: 'TASK_STATE_SUBMITTED' } });
    const taskId = first?.data.task.id as string;
    const watcher = await openSse(`${raw.relay.url}${base(bob)}/tasks/${taskId}:subscribe`, { 'x-api-key': alice.api_key }, {});
    expect((await watcher.next())?.data.task).toMatchObject({ id: taskId });
    await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'accept' });
    expect((await events.next())?.data).toMatchObject({ statusUpdate: { taskId, status: { state: 'TASK_STATE_WORKING' } } });
    expect((await watcher.next())?.data).toMatchObject({ statusUpdate: { taskId, status: { state: 'TASK_STATE_WORKING' } } });
    await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'complete' });
    expect((await events.rest()).at(-1)?.data).toMatchObject({ statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } } });
    expect((await watcher.rest()).at(-1)?.data).toMatchObject({ statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } } });

    const terminal = await http()
      .post(`${base(bob)}/tasks/${taskId}:subscribe`)
      .set('x-api-key', alice.api_key)
      .expect(400);
    expectStatus(terminal.body, 400, 'UNIMPLEMENTED', 'UNSUPPORTED_OPERATION');
    const viaGet = await http()
      .get(`${base(bob)}/tasks/${taskId}:subscribe`)
      .set('x-api-key', alice.api_key)
      .expect(400);
    expectStatus(viaGet.body, 400, 'UNIMPLEMENTED', 'UNSUPPORTED_OPERATION');
  });

  it('hides a task on every task route from whoever is not of its pair, and from the wrong endpoint (BOLA)', async () => {
    const task = await newTask(alice, bob, 'between alice and bob');
    await http()
      .post(`${base(bob)}/tasks/${task.id}/pushNotificationConfigs`)
      .set('x-api-key', alice.api_key)
      .send({ id: 'cfg-1', url: 'https://hooks.example.com/x' })
      .expect(200);
    const probes: Array<[RegisteredTestAgent, string]> = [
      [carol, base(bob)],
      [carol, base(alice)],
      [alice, base(carol)],
    ];
    for (const [caller, endpoint] of probes) {
      const routes = [
        http().get(`${endpoint}/tasks/${task.id}`),
        http().post(`${endpoint}/tasks/${task.id}:cancel`),
        http().post(`${endpoint}/tasks/${task.id}:subscribe`),
        http().get(`${endpoint}/tasks/${task.id}:subscribe`),
        http().post(`${endpoint}/tasks/${task.id}/pushNotificationConfigs`).send({ url: 'https://hooks.example.com/y' }),
        http().get(`${endpoint}/tasks/${task.id}/pushNotificationConfigs`),
        http().get(`${endpoint}/tasks/${task.id}/pushNotificationConfigs/cfg-1`),
        http().delete(`${endpoint}/tasks/${task.id}/pushNotificationConfigs/cfg-1`),
        http()
          .post(`${endpoint}/message:send`)
          .send({ message: message('hijack', { taskId: task.id }) }),
      ];
      for (const route of routes) {
        const response = await route.set('x-api-key', caller.api_key);
        expect({ status: response.status, reason: response.body.error?.details?.[0]?.reason }).toEqual({ status: 404, reason: 'TASK_NOT_FOUND' });
        expect(response.body.error.message).toBe('Task not found');
      }
    }
    // Nothing was changed: the task is still submitted, with one message and alice's config.
    const intact = await raw.getTask(alice, task.id);
    expect(intact).toMatchObject({ status: { state: 'TASK_STATE_SUBMITTED' } });
    expect(intact.history).toHaveLength(1);
    await http()
      .get(`${base(bob)}/tasks/${task.id}/pushNotificationConfigs/cfg-1`)
      .set('x-api-key', alice.api_key)
      .expect(200);
    const carolsList = await http()
      .get(`${base(bob)}/tasks`)
      .set('x-api-key', carol.api_key)
      .expect(200);
    expect(carolsList.body.tasks).toEqual([]);
  });

  it('maps errors to HTTP statuses with google.rpc.Status bodies', async () => {
    const anonymous = await http().get(`${base(bob)}/tasks`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toMatch(/^Bearer/);
    expectStatus(anonymous.body, 401, 'UNAUTHENTICATED', 'UNAUTHENTICATED');

    const unknownAgent = await http().get('/a2a/nobody@nowhere/tasks').set('x-api-key', alice.api_key).expect(404);
    expectStatus(unknownAgent.body, 404, 'NOT_FOUND', 'AGENT_NOT_FOUND');

    const badField = await http()
      .post(`${base(bob)}/message:send`)
      .set('x-api-key', alice.api_key)
      .send({ message: { role: 'ROLE_USER', parts: 'nope' } })
      .expect(400);
    expectStatus(badField.body, 400, 'INVALID_ARGUMENT', 'INVALID_PARAMS');
    expect(badField.body.error.details).toContainEqual({
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{ field: expect.stringMatching(/^message\.parts/), description: expect.any(String) }],
    });
    const notObject = await http()
      .post(`${base(bob)}/message:send`)
      .set('x-api-key', alice.api_key)
      .send([1])
      .expect(400);
    expect(notObject.body.error.details[0].metadata).toMatchObject({ field: 'body' });
    const badQuery = await http()
      .get(`${base(bob)}/tasks?includeArtifacts=maybe`)
      .set('x-api-key', alice.api_key)
      .expect(400);
    expect(badQuery.body.error.details[0].metadata).toMatchObject({ field: 'includeArtifacts' });
    const badPage = await http()
      .get(`${base(bob)}/tasks?pageSize=1000`)
      .set('x-api-key', alice.api_key)
      .expect(400);
    expectStatus(badPage.body, 400, 'INVALID_ARGUMENT', 'INVALID_PARAMS');

    const unparseable = await http()
      .post(`${base(bob)}/message:send`)
      .set('x-api-key', alice.api_key)
      .set('content-type', 'application/json')
      .send('{"message":');
    expect(unparseable.status).toBe(400);
    expect(unparseable.body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });

    const wrongType = await http()
      .post(`${base(bob)}/message:send`)
      .set('x-api-key', alice.api_key)
      .set('content-type', 'text/plain')
      .send('{"message":{}}');
    expect(wrongType.status).toBe(415);
    expectStatus(wrongType.body, 415, 'INVALID_ARGUMENT', 'CONTENT_TYPE_NOT_SUPPORTED');
    const a2aJson = await http()
      .post(`${base(bob)}/message:send`)
      .set('x-api-key', alice.api_key)
      .set('content-type', 'application/a2a+json')
      .send(JSON.stringify({ message: message('a2a+json'), configuration: { returnImmediately: true } }));
    expect(a2aJson.status).toBe(200);

    const tooLarge = await http()
      .post(`${base(bob)}/message:send`)
      .set('x-api-key', alice.api_key)
      .send({ message: message('x'.repeat(1100 * 1024)) });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error).toMatchObject({ code: 413, details: [{ reason: 'PAYLOAD_TOO_LARGE' }] });

    const badVersion = await http()
      .get(`${base(bob)}/tasks`)
      .set('x-api-key', alice.api_key)
      .set('a2a-version', '2.0')
      .expect(400);
    expectStatus(badVersion.body, 400, 'UNIMPLEMENTED', 'VERSION_NOT_SUPPORTED');
    const unknownTask = await http()
      .get(`${base(bob)}/tasks/01HXXXXXXXXXXXXXXXXXXXXXXX`)
      .set('x-api-key', alice.api_key)
      .expect(404);
    expectStatus(unknownTask.body, 404, 'NOT_FOUND', 'TASK_NOT_FOUND');
    const unknownVerb = await http()
      .post(`${base(bob)}/tasks/01HXXXXXXXXXXXXXXXXXXXXXXX:archive`)
      .set('x-api-key', alice.api_key)
      .expect(404);
    expectStatus(unknownVerb.body, 404, 'NOT_FOUND', 'METHOD_NOT_FOUND');
    const nul = await http()
      .get(`${base(bob)}/tasks?contextId=a%00b`)
      .set('x-api-key', alice.api_key)
      .expect(400);
    expectStatus(nul.body, 400, 'INVALID_ARGUMENT', 'INVALID_PARAMS');
  });
});

describe('A2A v0.3 HTTP+JSON binding under /v1 (raw HTTP)', () => {
  beforeAll(async () => {
    await raw.start();
  });

  afterAll(async () => {
    await raw.stop();
  });

  it('speaks the v0.3 proto shapes, v0.3 error objects with HTTP statuses, and hides other pairs tasks', async () => {
    const [erin, frank, grace] = await Promise.all([agent('erin'), agent('frank'), agent('grace')]);
    const v1 = `/a2a/${frank.agent.handle}/v1`;
    const sent = await request(raw.relay.url)
      .post(`${v1}/message:send`)
      .set('x-api-key', erin.api_key)
      .send({ message: { messageId: 'v03-1', role: 'ROLE_USER', content: [{ text: 'legacy' }] } })
      .expect(200);
    expect(sent.body.task).toMatchObject({ status: { state: 'TASK_STATE_SUBMITTED' }, history: [{ messageId: 'v03-1', content: [{ text: 'legacy' }] }] });
    const id = sent.body.task.id as string;
    await request(raw.relay.url).post(`${v1}/tasks/${id}:cancel`).set('x-api-key', erin.api_key).expect(200);
    const terminal = await request(raw.relay.url).get(`${v1}/tasks/${id}`).set('x-api-key', erin.api_key).expect(200);
    expect(terminal.body.status.state).toBe('TASK_STATE_CANCELLED');
    const again = await request(raw.relay.url).post(`${v1}/tasks/${id}:cancel`).set('x-api-key', erin.api_key).expect(409);
    expect(again.body).toMatchObject({ code: -32002, data: { reason: 'task_not_cancelable' } });
    const stranger = await request(raw.relay.url).get(`${v1}/tasks/${id}`).set('x-api-key', grace.api_key).expect(404);
    expect(stranger.body).toMatchObject({ code: -32001, message: 'Task not found' });
    const wrongType = await request(raw.relay.url).post(`${v1}/message:send`).set('x-api-key', erin.api_key).set('content-type', 'text/plain').send('{}');
    expect(wrongType.status).toBe(415);
    expect(wrongType.body).toMatchObject({ code: -32005 });
    const badVersion = await request(raw.relay.url).get(`${v1}/tasks/${id}`).set('x-api-key', erin.api_key).set('a2a-version', '1.0').expect(400);
    expect(badVersion.body).toMatchObject({ code: -32009 });
    await request(raw.relay.url).get(`${v1}/tasks`).set('x-api-key', erin.api_key).expect(404);
  });
});

describe('content type on JSON-RPC in the A2A dialects', () => {
  beforeAll(async () => {
    await raw.start();
  });

  afterAll(async () => {
    await raw.stop();
  });

  it('answers -32005 ContentTypeNotSupported (HTTP 415) in v1.0 and v0.3, -32600 in the AgentRelay dialect', async () => {
    const caller = await agent('dave');
    const post = (body: string, version?: string) => {
      const call = request(raw.relay.url).post('/a2a').set('x-api-key', caller.api_key).set('content-type', 'text/plain');
      return (version ? call.set('a2a-version', version) : call).send(body);
    };
    const v1 = await post('{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}', '1.0');
    expect(v1.status).toBe(415);
    expect(v1.body.error).toMatchObject({ code: -32005, data: [{ reason: 'CONTENT_TYPE_NOT_SUPPORTED', domain: 'a2a-protocol.org' }] });
    const v03 = await post('{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","parts":[]}}}');
    expect(v03.status).toBe(415);
    expect(v03.body.error).toMatchObject({ code: -32005, data: { reason: 'unsupported_media_type' } });
    const agentRelayDialect = await post('{"jsonrpc":"2.0","id":1,"method":"tasks/list","params":{}}');
    expect(agentRelayDialect.body.error).toMatchObject({ code: -32600, data: { reason: 'unsupported_media_type' } });
  });
});
