import request from 'supertest';
import { RelayHarness } from './support/relay-harness';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { expectRpcError, rpc } from './support/json-rpc';

describe('JSON-RPC envelope on POST /a2a', () => {
  let relay: RelayHarness;
  let agent: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    agent = await registerAgent(relay, { handle: uniqueHandle('envelope', 'acme'), name: 'Envelope' });
  });

  afterAll(async () => {
    await relay.stop();
  });

  const post = (body: string | object, path = '/a2a') =>
    request(relay.url)
      .post(path)
      .set('authorization', `Bearer ${agent.api_key}`)
      .set('content-type', 'application/json')
      .send(typeof body === 'string' ? body : JSON.stringify(body));

  it('answers unparseable JSON with -32700 and a null id', async () => {
    const response = await post('{"jsonrpc": "2.0", "id": "x", "method": ');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700, data: { reason: 'parse_error' } } });
    expect(JSON.stringify(response.body)).not.toMatch(/at .*\.js|stack/);
  });

  it('answers an empty body with -32700', async () => {
    const response = await post('');
    expect(response.status).toBe(200);
    expect(response.body.error.code).toBe(-32700);
  });

  it('answers an invalid request object with -32600, keeping the id when it can be read', async () => {
    const noVersion = await post({ id: 'req-9', method: 'tasks/get', params: {} });
    expect(noVersion.body).toMatchObject({ jsonrpc: '2.0', id: 'req-9' });
    expectRpcError(noVersion.body.error, { code: -32600, reason: 'invalid_request', field: 'jsonrpc' });
    const noMethod = await post({ jsonrpc: '2.0', id: 7 });
    expect(noMethod.body.id).toBe(7);
    expectRpcError(noMethod.body.error, { code: -32600, field: 'method' });
    const arrayParams = await post({ jsonrpc: '2.0', id: 'p', method: 'tasks/get', params: [1, 2] });
    expect(arrayParams.body.id).toBe('p');
    expectRpcError(arrayParams.body.error, { code: -32600, field: 'params' });
    const badId = await post({ jsonrpc: '2.0', id: { nested: true }, method: 'tasks/get', params: {} });
    expect(badId.body.id).toBeNull();
    expectRpcError(badId.body.error, { code: -32600, field: 'id' });
    const batch = await post([{ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: {} }]);
    expect(batch.body).toMatchObject({ id: null, error: { code: -32600 } });
    const scalar = await post('42');
    expect(scalar.body).toMatchObject({ id: null, error: { code: -32600 } });
    for (const response of [noVersion, noMethod, arrayParams, badId, batch, scalar]) expect(response.status).toBe(200);
  });

  it('answers an unknown method with -32601 and the id', async () => {
    const response = await rpc(relay.url, agent.api_key, 'tasks/explode', { task_id: 'x' }, { id: 'req-u' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      jsonrpc: '2.0',
      id: 'req-u',
      error: { code: -32601, data: { reason: 'method_not_found', method: 'tasks/explode' } },
    });
  });

  it('answers bad params with -32602 naming the field', async () => {
    const response = await rpc(relay.url, agent.api_key, 'tasks/update', { task_id: '01HXYZ4K2VNJQP7R8MWDB3CSTF', transition: 'explode' }, { id: 3 });
    expect(response.body.id).toBe(3);
    expectRpcError(response.body.error, { code: -32602, reason: 'invalid_params', field: 'transition' });
    const list = await rpc(relay.url, agent.api_key, 'tasks/list', { filter: { role: 'recipient' }, page: { limit: 500 } });
    expectRpcError(list.body.error, { code: -32602, field: 'page.limit' });
  });

  it('answers 401 with WWW-Authenticate and a JSON-RPC error without a valid key', async () => {
    const missing = await rpc(relay.url, undefined, 'tasks/list', {}, { id: 'a1' });
    expect(missing.status).toBe(401);
    expect(missing.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(missing.body).toMatchObject({ jsonrpc: '2.0', id: 'a1', error: { code: -32000, data: { reason: 'unauthenticated' } } });
    const wrong = await rpc(relay.url, 'ah_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'tasks/list', {}, { id: 'a2' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ id: 'a2', error: { code: -32000 } });
  });

  it('accepts the key in X-API-Key, and a trailing slash', async () => {
    const response = await request(relay.url)
      .post('/a2a/')
      .set('x-api-key', agent.api_key)
      .send({ jsonrpc: '2.0', id: 'k', method: 'tasks/list', params: { filter: { role: 'sender' } } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ jsonrpc: '2.0', id: 'k', result: { items: [], next_cursor: null } });
  });

  it('answers a body over 1 MiB with 413 and a JSON-RPC error body', async () => {
    const text = 'x'.repeat(1024 * 1024 + 10);
    const response = await post({
      jsonrpc: '2.0',
      id: 'big',
      method: 'message/send',
      params: { recipient: 'a@b', message: { parts: [{ type: 'text', text }] } },
    });
    expect(response.status).toBe(413);
    expect(response.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32600, data: { reason: 'payload_too_large' } } });
  });

  it('answers a chunked body over 1 MiB with 413 too', async () => {
    const url = new URL(relay.url);
    const http = await import('node:http');
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: '/a2a',
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.api_key}`, 'transfer-encoding': 'chunked' },
        },
        (res) => {
          let data = '';
          res.on('data', (chunk: Buffer) => (data += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
        },
      );
      req.on('error', reject);
      const chunk = 'y'.repeat(64 * 1024);
      req.write('{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"pad":"');
      for (let index = 0; index < 20; index++) req.write(chunk);
      req.end('"}}');
    });
    expect(status).toBe(413);
    expect(JSON.parse(body)).toMatchObject({ jsonrpc: '2.0', error: { data: { reason: 'payload_too_large' } } });
  });

  it('answers a body that is not application/json with 415 and a JSON-RPC error body', async () => {
    const response = await request(relay.url)
      .post('/a2a')
      .set('authorization', `Bearer ${agent.api_key}`)
      .set('content-type', 'text/plain')
      .send('{"jsonrpc":"2.0","id":1,"method":"tasks/list","params":{}}');
    expect(response.status).toBe(415);
    expect(response.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { reason: 'unsupported_media_type' } } });
    const charset = await request(relay.url)
      .post('/a2a')
      .set('authorization', `Bearer ${agent.api_key}`)
      .set('content-type', 'application/json; charset=utf-8')
      .send('{"jsonrpc":"2.0","id":1,"method":"tasks/list","params":{}}');
    expect(charset.status).toBe(200);
  });

  it('refuses an unsupported A2A-Version', async () => {
    const response = await rpc(relay.url, agent.api_key, 'GetTask', { id: 'x' }, { id: 'v', headers: { 'a2a-version': '2.0' } });
    expect(response.body).toMatchObject({ id: 'v', error: { code: -32009 } });
  });

  it('renders A2A v1.0 errors as google.rpc.ErrorInfo details', async () => {
    const response = await rpc(relay.url, agent.api_key, 'GetTask', { id: '01HXYZ4K2VNJQP7R8MWDB3CSTF' }, { id: 'g', headers: { 'a2a-version': '1.0' } });
    expect(response.body).toMatchObject({
      id: 'g',
      error: { code: -32001, data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' }] },
    });
  });
});
