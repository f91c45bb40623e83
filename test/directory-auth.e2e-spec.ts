import request from 'supertest';
import { registerAgent, setTrust, uniqueHandle } from './support/agents';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const inbox = { jsonrpc: '2.0', id: 'inbox-1', method: 'tasks/list', params: { filter: { role: 'recipient' } } };

function task(recipient: string, text: string): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    id: 'send-1',
    method: 'message/send',
    params: { recipient, intent: 'inform', message: { role: 'user', parts: [{ type: 'text', text }] } },
  };
}

function expectUnauthenticated(response: request.Response, id: string | null = 'inbox-1'): void {
  expect(response.status).toBe(401);
  expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
  expect(response.body).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32000, data: { reason: 'unauthenticated' } } });
}

describe('API keys and trust on POST /a2a', () => {
  let relay: RelayHarness;

  beforeAll(async () => {
    relay = await RelayHarness.start();
  });

  afterAll(async () => {
    await relay?.stop();
  });

  it('accepts a registered key as Authorization: Bearer and as X-API-Key', async () => {
    const bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
    const viaBearer = await request(relay.url).post('/a2a').set('authorization', `Bearer ${bob.api_key}`).send(inbox).expect(200);
    expect(viaBearer.body).toMatchObject({ jsonrpc: '2.0', id: 'inbox-1', result: { items: [] } });
    const viaHeader = await request(relay.url).post('/a2a').set('x-api-key', bob.api_key).send(inbox).expect(200);
    expect(viaHeader.body.result.items).toEqual([]);
  });

  it('answers 401 with a JSON-RPC body and WWW-Authenticate to a missing, malformed, unknown or admin credential', async () => {
    expectUnauthenticated(await request(relay.url).post('/a2a').send(inbox));
    for (const headers of [
      { authorization: 'Bearer not-a-key' },
      { authorization: `Bearer ah_live_${'A'.repeat(32)}` },
      { 'x-api-key': `ah_live_${'B'.repeat(32)}` },
      admin,
      { 'x-api-key': TEST_ADMIN_TOKEN },
    ]) {
      expectUnauthenticated(await request(relay.url).post('/a2a').set(headers).send(inbox));
    }
  });

  it('rotates, then revokes: the old key is 401 at once on both edge replicas and creates nothing', async () => {
    const org = `rot${Math.random().toString(36).slice(2, 7)}`;
    const gus = await registerAgent(relay, { handle: `gus@${org}`, name: 'Gus' });
    const frank = await registerAgent(relay, { handle: `frank@${org}`, name: 'Frank' });
    const second = await relay.startEdge();
    const edges = [relay.url, relay.urlOf(second)];

    const rotated = await request(relay.url).post(`/admin/agents/${gus.agent.handle}/keys`).set(admin).expect(201);
    for (const url of edges) {
      await request(url).post('/a2a').set('x-api-key', gus.api_key).send(inbox).expect(200);
      await request(url).post('/a2a').set('authorization', `Bearer ${rotated.body.api_key}`).send(inbox).expect(200);
    }

    await request(edges[1]).delete(`/admin/agents/${gus.agent.handle}/keys/${gus.key.prefix}`).set(admin).expect(200);
    for (const url of edges) {
      expectUnauthenticated(await request(url).post('/a2a').set('x-api-key', gus.api_key).send(inbox));
      expectUnauthenticated(
        await request(url).post('/a2a').set('authorization', `Bearer ${gus.api_key}`).send(task(frank.agent.handle, 'from a revoked key')),
        'send-1',
      );
      await request(url).post('/a2a').set('x-api-key', rotated.body.api_key).send(inbox).expect(200);
    }
    const frankInbox = await request(relay.url).post('/a2a').set('x-api-key', frank.api_key).send(inbox).expect(200);
    expect(frankInbox.body.result.items).toEqual([]);

    await request(edges[1]).delete(`/admin/agents/${gus.agent.handle}`).set(admin).expect(200);
    for (const url of edges) expectUnauthenticated(await request(url).post('/a2a').set('x-api-key', rotated.body.api_key).send(inbox));
  });

  it('admits teammates, refuses other orgs unless allowed, and lets block win', async () => {
    const org = `trust${Math.random().toString(36).slice(2, 7)}`;
    const partner = `partner${Math.random().toString(36).slice(2, 7)}`;
    const frank = await registerAgent(relay, { handle: `frank@${org}`, name: 'Frank' });
    const bob = await registerAgent(relay, { handle: `bob@${org}`, name: 'Bob' });
    const carol = await registerAgent(relay, { handle: `carol@${partner}`, name: 'Carol' });
    const send = (key: string, text: string) => request(relay.url).post('/a2a').set('x-api-key', key).send(task(frank.agent.handle, text)).expect(200);

    expect((await send(bob.api_key, 'teammate')).body.result).toMatchObject({ status: { state: 'pending' } });
    const refused = await send(carol.api_key, 'stranger');
    expect(refused.body.error).toMatchObject({ code: -32013, data: { reason: 'teammate_blocked', policy: 'not_allowed' } });

    await setTrust(relay, frank.agent.handle, { allow: [`*@${partner}`] });
    expect((await send(carol.api_key, 'allowed now')).body.result).toMatchObject({ status: { state: 'pending' } });

    await setTrust(relay, frank.agent.handle, { allow: [`*@${partner}`], block: [carol.agent.handle, bob.agent.handle] });
    expect((await send(carol.api_key, 'blocked')).body.error).toMatchObject({ code: -32013, data: { reason: 'teammate_blocked', policy: 'blocked' } });
    expect((await send(bob.api_key, 'blocked teammate')).body.error).toMatchObject({ code: -32013, data: { reason: 'teammate_blocked', policy: 'blocked' } });

    const unknown = await request(relay.url)
      .post('/a2a')
      .set('x-api-key', bob.api_key)
      .send(task(`nobody@${org}`, 'hello?'))
      .expect(200);
    expect(unknown.body.error).toMatchObject({ code: -32004, data: { reason: 'recipient_not_found' } });
  });

  it('disables an agent: its keys stop working, and its threads stay readable to the other party', async () => {
    const org = `dis${Math.random().toString(36).slice(2, 7)}`;
    const bob = await registerAgent(relay, { handle: `bob@${org}`, name: 'Bob' });
    const frank = await registerAgent(relay, { handle: `frank@${org}`, name: 'Frank' });
    const sent = await request(relay.url).post('/a2a').set('x-api-key', bob.api_key).send(task(frank.agent.handle, 'before I leave')).expect(200);
    const taskId = sent.body.result.task_id as string;
    expect(taskId).toBeDefined();

    await request(relay.url).delete(`/admin/agents/${bob.agent.handle}`).set(admin).expect(200);
    expectUnauthenticated(await request(relay.url).post('/a2a').set('x-api-key', bob.api_key).send(inbox));

    const read = await request(relay.url)
      .post('/a2a')
      .set('x-api-key', frank.api_key)
      .send({ jsonrpc: '2.0', id: 'get-1', method: 'tasks/get', params: { task_id: taskId } })
      .expect(200);
    expect(read.body.result).toMatchObject({ task_id: taskId, sender: { handle: bob.agent.handle } });
    expect(read.body.result.messages[0].body).toBe('before I leave');
  });
});
