import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import request from 'supertest';
import { TASK_LIMITS } from '@app/contracts';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { expectRpcError, rpc, type Json } from './support/json-rpc';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { countTasksReceivedBy } from './support/tasks';
import { testDatabaseUrl } from './support/test-env';

/** About 658 KB of data in 40,000 keys: what one request cost the tasks service 1.5 CPU-seconds to store. */
function manyKeysData(): Record<string, number> {
  const data: Record<string, number> = {};
  for (let key = 0; key < 40_000; key += 1) data[`field_${String(key).padStart(5, '0')}`] = key;
  return data;
}

function deepData(): Record<string, unknown> {
  let deep: Record<string, unknown> = { leaf: true };
  for (let level = 0; level < TASK_LIMITS.metadataDepth; level += 1) deep = { nested: deep };
  return deep;
}

/** The ErrorInfo metadata of an HTTP+JSON error body (google.rpc.Status). */
function restErrorInfo(body: Json): Json {
  const info = (body.error?.details as Json[] | undefined)?.find((detail) => detail['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo');
  return (info?.metadata ?? {}) as Json;
}

/**
 * Input the services cannot afford or Postgres cannot store is refused at the edge, -32602 (or
 * HTTP 400 on the HTTP+JSON binding) naming the field as the client wrote it, before any service
 * is asked: `data` parts under the bounds of metadata, lone surrogates anywhere, integers past
 * what the database counts.
 */
describe('edge input bounds', () => {
  let relay: RelayHarness;
  let db: Client;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;

  const tasksReceivedBy = (agent: RegisteredTestAgent): Promise<number> => countTasksReceivedBy(db, agent);

  /** A JSON-RPC body sent as written (so that escapes such as \ud800 reach the edge untouched). */
  function postRaw(path: string, body: string, headers: Record<string, string> = {}): Promise<request.Response> {
    let call = request(relay.url).post(path).set('x-api-key', alice.api_key).set('content-type', 'application/json');
    for (const [name, value] of Object.entries(headers)) call = call.set(name, value);
    return call.send(body);
  }

  beforeAll(async () => {
    relay = await RelayHarness.start();
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    const org = `bounds${Math.random().toString(36).slice(2, 7)}`;
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
  });

  afterAll(async () => {
    await db?.end();
    await relay?.stop();
  });

  describe('data parts', () => {
    it('answers a 40,000-key data part -32602 naming the part, in every dialect and binding, and creates nothing', async () => {
      const before = await tasksReceivedBy(bob);
      const data = manyKeysData();
      expect(Buffer.byteLength(JSON.stringify(data))).toBeGreaterThan(600_000);
      const endpoint = `/a2a/${bob.agent.handle}`;

      const agentRelay = await rpc(relay.url, alice.api_key, 'message/send', {
        recipient: bob.agent.handle,
        intent: 'inform',
        message: {
          role: 'user',
          parts: [
            { type: 'text', text: 'see data' },
            { type: 'data', data },
          ],
        },
      });
      expectRpcError(agentRelay.body.error, { code: -32602, reason: 'invalid_params', field: 'message.parts[1].data' });
      expect(agentRelay.body.error?.message).toContain(`more than ${TASK_LIMITS.metadataKeysPerObject} keys`);

      const v03 = await rpc(
        relay.url,
        alice.api_key,
        'message/send',
        { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'data', data }] } },
        { path: endpoint },
      );
      expectRpcError(v03.body.error, { code: -32602, field: 'message.parts[0].data' });

      const v10 = await rpc(
        relay.url,
        alice.api_key,
        'SendMessage',
        { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'see data' }, { data }] } },
        { path: endpoint, headers: { 'a2a-version': '1.0' } },
      );
      expectRpcError(v10.body.error, { code: -32602, field: 'message.parts[1].data', shape: 'error-info' });

      const rest = await request(relay.url)
        .post(`${endpoint}/message:send`)
        .set('x-api-key', alice.api_key)
        .set('a2a-version', '1.0')
        .send({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ data }] } });
      expect(rest.status).toBe(400);
      expect(restErrorInfo(rest.body)).toMatchObject({ field: 'message.parts[0].data' });

      const restV03 = await request(relay.url)
        .post(`${endpoint}/v1/message:send`)
        .set('x-api-key', alice.api_key)
        .send({ message: { messageId: randomUUID(), role: 'ROLE_USER', content: [{ data: { data } }] } });
      // The v0.3 binding answers with the v0.3 JSON-RPC error object as its body.
      expect(restV03.status).toBe(400);
      expectRpcError(restV03.body, { code: -32602, field: 'message.content[0].data.data' });

      expect(await tasksReceivedBy(bob)).toBe(before);
    });

    it('bounds the depth and the bytes of a data part, and relays one within the bounds', async () => {
      const tooDeep = await rpc(relay.url, alice.api_key, 'message/send', {
        recipient: bob.agent.handle,
        intent: 'inform',
        message: { role: 'user', parts: [{ type: 'data', data: deepData() }] },
      });
      expectRpcError(tooDeep.body.error, { code: -32602, field: 'message.parts[0].data' });
      expect(tooDeep.body.error?.message).toContain(`deeper than ${TASK_LIMITS.metadataDepth} levels`);

      const tooBig = await rpc(
        relay.url,
        alice.api_key,
        'SendMessage',
        { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ data: 'd'.repeat(TASK_LIMITS.metadataBytes) }] } },
        { path: `/a2a/${bob.agent.handle}`, headers: { 'a2a-version': '1.0' } },
      );
      expectRpcError(tooBig.body.error, { code: -32602, field: 'message.parts[0].data' });
      expect(tooBig.body.error?.message).toContain(`at most ${TASK_LIMITS.metadataBytes} bytes`);

      const fits = await rpc(relay.url, alice.api_key, 'message/send', {
        recipient: bob.agent.handle,
        intent: 'inform',
        message: { role: 'user', parts: [{ type: 'data', data: { rows: Array.from({ length: 200 }, (_, index) => ({ index })) } }] },
      });
      expect(fits.body.error).toBeUndefined();
      expect(fits.body.result?.task_id).toEqual(expect.any(String));
    });
  });

  describe('lone surrogates', () => {
    it('answers a string holding \\ud800 -32602 naming the field, in every dialect, and creates nothing', async () => {
      const before = await tasksReceivedBy(bob);
      const agentRelay = await postRaw(
        '/a2a',
        `{"jsonrpc":"2.0","id":"s1","method":"message/send","params":{"recipient":"${bob.agent.handle}","intent":"inform","message":{"role":"user","parts":[{"type":"text","text":"half \\ud800 a pair"}]}}}`,
      );
      expect(agentRelay.status).toBe(200);
      expectRpcError(agentRelay.body.error, { code: -32602, reason: 'invalid_params', field: 'message.parts[0].text' });
      expect(agentRelay.body.error.message).toContain('lone UTF-16 surrogate');
      expect(agentRelay.body.id).toBe('s1');

      const v10 = await postRaw(
        `/a2a/${bob.agent.handle}`,
        `{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"${randomUUID()}","role":"ROLE_USER","parts":[{"text":"ok"}],"metadata":{"note":"\\udfff"}}}}`,
        { 'a2a-version': '1.0' },
      );
      expectRpcError(v10.body.error, { code: -32602, field: 'message.metadata.note', shape: 'error-info' });

      const rest = await request(relay.url)
        .post(`/a2a/${bob.agent.handle}/message:send`)
        .set('x-api-key', alice.api_key)
        .set('a2a-version', '1.0')
        .set('content-type', 'application/json')
        .send(`{"message":{"messageId":"${randomUUID()}","role":"ROLE_USER","parts":[{"text":"\\ud83d"}]}}`);
      expect(rest.status).toBe(400);
      expect(restErrorInfo(rest.body)).toMatchObject({ field: 'message.parts[0].text' });

      const admin = await request(relay.url)
        .post('/admin/agents')
        .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
        .set('content-type', 'application/json')
        .send(`{"handle":"${uniqueHandle('surrogate', 'bounds')}","name":"Half \\ud800"}`);
      expect(admin.status).toBe(400);
      expect(admin.body.error).toMatchObject({ reason: 'invalid_params', fields: [{ field: 'name' }] });

      expect(await tasksReceivedBy(bob)).toBe(before);
    });

    it('relays a string with a whole surrogate pair (an emoji) as it was sent', async () => {
      const sent = await postRaw(
        '/a2a',
        `{"jsonrpc":"2.0","id":"s2","method":"message/send","params":{"recipient":"${bob.agent.handle}","intent":"inform","message":{"role":"user","parts":[{"type":"text","text":"ship it \\ud83d\\ude80"}]}}}`,
      );
      expect(sent.body.error).toBeUndefined();
      const read = await rpc(relay.url, bob.api_key, 'tasks/get', { task_id: sent.body.result.task_id });
      expect(JSON.stringify(read.body.result)).toContain('ship it \u{1F680}');
    });
  });

  describe('integer and timestamp params', () => {
    it('answers an AgentRelay after_sequence_no past the largest sequence number -32602 naming it', async () => {
      const sent = await rpc(relay.url, alice.api_key, 'message/send', {
        recipient: bob.agent.handle,
        intent: 'inform',
        message: { role: 'user', parts: [{ type: 'text', text: 'page me' }] },
      });
      const taskId = sent.body.result?.task_id as string;
      for (const afterSequenceNo of [2 ** 31, 2 ** 53, 1e300]) {
        const response = await rpc(relay.url, bob.api_key, 'tasks/get', { task_id: taskId, after_sequence_no: afterSequenceNo });
        expect({ afterSequenceNo, status: response.status }).toEqual({ afterSequenceNo, status: 200 });
        expectRpcError(response.body.error, { code: -32602, reason: 'invalid_params', field: 'after_sequence_no' });
      }
      const largest = await rpc(relay.url, bob.api_key, 'tasks/get', { task_id: taskId, after_sequence_no: TASK_LIMITS.sequenceNoMax });
      expect(largest.body.error).toBeUndefined();
      expect(largest.body.result).toMatchObject({ task_id: taskId, messages: [] });
    });

    it('answers list timestamps outside the years 1 to 9999 -32602 naming them, in both dialects', async () => {
      for (const since of ['0000-06-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:30:00-05:00']) {
        const agentRelay = await rpc(relay.url, alice.api_key, 'tasks/list', { filter: { role: 'sender', since } });
        expect({ since, status: agentRelay.status }).toEqual({ since, status: 200 });
        expectRpcError(agentRelay.body.error, { code: -32602, reason: 'invalid_params', field: 'filter.since' });
        const v10 = await rpc(relay.url, alice.api_key, 'ListTasks', { statusTimestampAfter: since }, { headers: { 'a2a-version': '1.0' } });
        expect({ since, status: v10.status }).toEqual({ since, status: 200 });
        expectRpcError(v10.body.error, { code: -32602, field: 'statusTimestampAfter' });
      }
      const earliest = await rpc(
        relay.url,
        alice.api_key,
        'ListTasks',
        { statusTimestampAfter: '0001-01-01T00:00:00Z' },
        { headers: { 'a2a-version': '1.0' } },
      );
      expect(earliest.body.error).toBeUndefined();
      expect(earliest.body.result).toMatchObject({ tasks: expect.any(Array) });
    });

    it('answers page sizes and history lengths past their bounds -32602 naming them, in every dialect', async () => {
      const listed = await rpc(relay.url, alice.api_key, 'tasks/list', { page: { limit: 2 ** 31 } });
      expectRpcError(listed.body.error, { code: -32602, field: 'page.limit' });
      const v10 = await rpc(relay.url, alice.api_key, 'ListTasks', { pageSize: 2 ** 31, historyLength: 2 ** 31 }, { headers: { 'a2a-version': '1.0' } });
      expectRpcError(v10.body.error, { code: -32602, field: 'pageSize' });
      const got = await rpc(relay.url, alice.api_key, 'GetTask', { id: randomUUID(), historyLength: '2147483648' }, { headers: { 'a2a-version': '1.0' } });
      expectRpcError(got.body.error, { code: -32602, field: 'historyLength' });
      const rest = await request(relay.url)
        .get(`/a2a/${bob.agent.handle}/tasks?pageSize=99999999999`)
        .set('x-api-key', alice.api_key)
        .set('a2a-version', '1.0');
      expect(rest.status).toBe(400);
      expect(restErrorInfo(rest.body)).toMatchObject({ field: 'pageSize' });
    });
  });
});
