import { randomUUID } from 'node:crypto';
import { generateKeyPair, SignJWT } from 'jose';
import request from 'supertest';
import { TaskState, type Task } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { TestOpenIdProvider } from './support/openid-provider';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { bearerTokenAuth, drain, nextEvent, summary, userMessage } from './support/sdk-client';

/** A well-formed agent key no agent has. */
function wrongKey(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  return `ah_live_${Array.from({ length: 32 }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join('')}`;
}

const RETURN_IMMEDIATELY = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true };
const LIST_ALL = {
  tenant: '',
  contextId: '',
  status: TaskState.TASK_STATE_UNSPECIFIED,
  historyLength: 0,
  statusTimestampAfter: undefined,
  includeArtifacts: false,
  pageSize: 100,
  pageToken: '',
};

describe('agents authenticate with client-credentials JWTs from the IdP, beside API keys', () => {
  let idp: TestOpenIdProvider;
  let relay: RelayHarness;
  let org: string;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;

  /** An SDK client of bob's endpoint on one binding, authenticated by the SDK's auth handler with alice's client-credentials tokens. */
  async function aliceClient(
    binding: 'JSONRPC' | 'HTTP+JSON',
    clientId = 'alice-machine',
  ): Promise<{ client: Client; auth: ReturnType<typeof bearerTokenAuth> }> {
    const auth = bearerTokenAuth(() => idp.clientCredentialsToken(clientId));
    const fetchImpl = createAuthenticatingFetchWithRetry(fetch, auth);
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: binding === 'JSONRPC' ? [new JsonRpcTransportFactory({ fetchImpl })] : [new RestTransportFactory({ fetchImpl })],
        preferredTransports: [binding],
      }),
    );
    return { client: await factory.createFromUrl(`${relay.url}/a2a/${bob.agent.handle}/`), auth };
  }

  async function agentRelay(agent: RegisteredTestAgent, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const response = await request(relay.url).post('/a2a').set('authorization', `Bearer ${agent.api_key}`).send({ jsonrpc: '2.0', id: 1, method, params });
    if (response.body.error) throw new Error(`${method}: ${JSON.stringify(response.body.error)}`);
    return response.body.result as Record<string, unknown>;
  }

  beforeAll(async () => {
    org = `jwt${randomUUID().slice(0, 6)}`;
    const aliceHandle = uniqueHandle('alice', org);
    idp = await TestOpenIdProvider.start({
      clients: [
        { clientId: 'alice-machine', clientSecret: 'alice-machine-secret-0123456789', claims: { agentrelay_handle: aliceHandle } },
        { clientId: 'carol-machine', clientSecret: 'carol-machine-secret-0123456789' },
      ],
    });
    relay = await RelayHarness.start({
      env: { RELAY_OIDC_ISSUERS: JSON.stringify([{ issuer: idp.issuer, audience: idp.audience }]), RELAY_OIDC_JWKS_COOLDOWN_MS: '2000' },
    });
    alice = await registerAgent(relay, { handle: aliceHandle, name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
  });

  afterAll(async () => {
    await relay?.stop();
    await idp?.stop();
  });

  it.each(['JSONRPC', 'HTTP+JSON'] as const)('sends, reads, lists and streams over %s with a token from the token endpoint', async (binding) => {
    const { client, auth } = await aliceClient(binding);
    const sent = (await client.sendMessage({
      tenant: '',
      message: userMessage(`over ${binding}`),
      configuration: RETURN_IMMEDIATELY,
      metadata: undefined,
    })) as Task;
    expect(sent.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(sent.metadata?.relay).toMatchObject({ sender: alice.agent.handle, recipient: bob.agent.handle });

    const read = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
    expect(read.id).toBe(sent.id);
    const listed = await client.listTasks(LIST_ALL);
    expect(listed.tasks.map((task) => task.id)).toContain(sent.id);

    const events = client.sendMessageStream({ tenant: '', message: userMessage(`stream over ${binding}`), configuration: undefined, metadata: undefined });
    const first = await nextEvent(events);
    expect(summary(first)).toEqual(['task', TaskState.TASK_STATE_SUBMITTED]);
    const taskId = first.payload?.$case === 'task' ? first.payload.value.id : '';
    await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'accept' });
    expect(summary(await nextEvent(events))).toEqual(['statusUpdate', TaskState.TASK_STATE_WORKING]);
    await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'done' });
    expect((await drain(events)).map(summary).at(-1)).toEqual(['statusUpdate', TaskState.TASK_STATE_COMPLETED]);

    // One token served every call: the edge verified it once and kept its identity.
    expect(auth.tokensFetched()).toBe(1);
    // The API key keeps working beside it.
    const inbox = await agentRelay(bob, 'tasks/list', { filter: { role: 'recipient' } });
    expect((inbox.items as { task_id: string }[]).map((item) => item.task_id)).toContain(sent.id);
  });

  it("lists the IdP's client-credentials flow on the cards beside the API key schemes", async () => {
    const v1 = await request(relay.url).get(`/a2a/${bob.agent.handle}/.well-known/agent-card.json`).expect(200);
    expect(v1.body.securitySchemes).toMatchObject({
      bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } },
      apiKey: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } },
      oauth2: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: idp.tokenEndpoint, scopes: {} } } } },
    });
    expect(v1.body.securityRequirements).toEqual([
      { schemes: { bearer: { list: [] } } },
      { schemes: { apiKey: { list: [] } } },
      { schemes: { oauth2: { list: [] } } },
    ]);

    const relayCard = await request(relay.url).get('/.well-known/agent-card.json').expect(200);
    expect(relayCard.body.securitySchemes.oauth2.oauth2SecurityScheme.flows.clientCredentials.tokenUrl).toBe(idp.tokenEndpoint);

    // The v0.3 rendering (the extended card asked in 0.3) has the JSON-Schema form and `security`.
    const token = await idp.clientCredentialsToken('alice-machine');
    const v03 = await request(relay.url)
      .post(`/a2a/${bob.agent.handle}`)
      .set('authorization', `Bearer ${token}`)
      .set('a2a-version', '0.3')
      .send({ jsonrpc: '2.0', id: 1, method: 'agent/getAuthenticatedExtendedCard' })
      .expect(200);
    expect(v03.body.result.securitySchemes.oauth2).toEqual({
      type: 'oauth2',
      description: expect.any(String),
      flows: { clientCredentials: { tokenUrl: idp.tokenEndpoint, scopes: {} } },
    });
    expect(v03.body.result.security).toEqual([{ bearer: [] }, { apiKey: [] }, { oauth2: [] }]);
  });

  it("authenticates a token without a handle claim by its sub's mapping, set through the admin API and audited", async () => {
    const carol = await registerAgent(relay, { handle: uniqueHandle('carol', org), name: 'Carol' });
    const token = await idp.clientCredentialsToken('carol-machine');
    const before = await request(relay.url)
      .post('/a2a')
      .set('authorization', `Bearer ${token}`)
      .send({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} });
    expect(before.status).toBe(401);
    expect(before.body.error.data).toMatchObject({ error: 'invalid_token', check: 'unknown_agent' });

    const mapped = await request(relay.url)
      .put(`/admin/agents/${carol.agent.handle}/token-subject`)
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send({ issuer: idp.issuer, subject: 'carol-machine' })
      .expect(200);
    expect(mapped.body).toEqual({ handle: carol.agent.handle, issuer: idp.issuer, subject: 'carol-machine' });
    const listed = await request(relay.url)
      .post('/a2a')
      .set('authorization', `Bearer ${token}`)
      .send({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} });
    expect(listed.status).toBe(200);
    expect(listed.body.result).toHaveProperty('items');

    const audit = await request(relay.url).get('/admin/audit').set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`).expect(200);
    expect(audit.body.items).toContainEqual(
      expect.objectContaining({ action: 'token_subject.put', target: carol.agent.handle, detail: { issuer: idp.issuer, subject: 'carol-machine' } }),
    );

    // The same subject cannot name a second agent; an unknown issuer is refused by name.
    const taken = await request(relay.url)
      .put(`/admin/agents/${bob.agent.handle}/token-subject`)
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send({ issuer: idp.issuer, subject: 'carol-machine' });
    expect(taken.status).toBe(400);
    expect(JSON.stringify(taken.body)).toContain('already mapped to another agent');
    const unknownIssuer = await request(relay.url)
      .put(`/admin/agents/${bob.agent.handle}/token-subject`)
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send({ issuer: 'https://idp.elsewhere.example', subject: 'x' });
    expect(unknownIssuer.status).toBe(400);
    expect(JSON.stringify(unknownIssuer.body)).toContain('is not one of RELAY_OIDC_ISSUERS');

    await request(relay.url).delete(`/admin/agents/${carol.agent.handle}/token-subject`).set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`).expect(200);
    const after = await request(relay.url)
      .post('/a2a')
      .set('authorization', `Bearer ${token}`)
      .send({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} });
    expect(after.status).toBe(401);
  });

  it('keeps working across a key rotation at the IdP, without a relay restart', async () => {
    const before = await idp.clientCredentialsToken('alice-machine');
    const { client } = await aliceClient('JSONRPC');
    await client.listTasks(LIST_ALL);
    const previousKid = idp.currentKey.kid;
    const jwksFetches = idp.requestCount('/jwks');

    const rotated = await idp.rotateSigningKey({ retirePrevious: true });
    expect(rotated.kid).not.toBe(previousKid);
    const after = await idp.clientCredentialsToken('alice-machine');
    expect(after).not.toBe(before);
    // The relay fetches the JWKS again for the new kid once its cooldown (2 s here) since the last fetch has passed.
    const response = await eventuallyAccepted(after);
    expect(response.status).toBe(200);
    expect(idp.requestCount('/jwks')).toBeGreaterThan(jwksFetches);
  });

  it('serves a new token from an address past its failure budget, which guessed API keys spent; a forged token is still refused and counted', async () => {
    const failures = 5;
    const edgeUrl = relay.urlOf(await relay.startEdge({ RELAY_AUTH_FAILURES_PER_WINDOW: String(failures) }));
    const list = (credential: string): request.Test =>
      request(edgeUrl).post('/a2a').set('authorization', `Bearer ${credential}`).send({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} });
    for (let attempt = 0; attempt < failures; attempt += 1) expect((await list(wrongKey())).status).toBe(401);
    expect((await list(wrongKey())).status).toBe(429);

    // A token this edge never saw, fresh from the token endpoint: verified by its signature and served.
    const fresh = await list(await idp.clientCredentialsToken('alice-machine'));
    expect(fresh.status).toBe(200);
    expect(fresh.body.result).toHaveProperty('items');

    // A token signed with another key under the IdP's kid is refused by its signature, and counted for itself.
    const { privateKey } = await generateKeyPair('RS256');
    const forged = await new SignJWT({ sub: 'alice-machine', agentrelay_handle: alice.agent.handle })
      .setProtectedHeader({ alg: 'RS256', kid: idp.currentKey.kid })
      .setIssuer(idp.issuer)
      .setAudience(idp.audience)
      .setExpirationTime('5m')
      .sign(privateKey);
    for (let attempt = 0; attempt < failures; attempt += 1) {
      const refused = await list(forged);
      expect(refused.status).toBe(401);
      expect(refused.body.error.data).toMatchObject({ error: 'invalid_token', check: 'signature' });
    }
    const replayed = await list(forged);
    expect(replayed.status).toBe(429);
    expect(Number(replayed.headers['retry-after'])).toBeGreaterThan(0);
    // API keys from that address are still throttled.
    expect((await list(wrongKey())).status).toBe(429);
  });

  /** The relay refetches a JWKS for an unknown kid at most once per cooldown: within it the token is refused, after it accepted. */
  async function eventuallyAccepted(token: string): Promise<request.Response> {
    const deadline = Date.now() + 45_000;
    for (;;) {
      const response = await request(relay.url)
        .post('/a2a')
        .set('authorization', `Bearer ${token}`)
        .send({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} });
      if (response.status === 200 || Date.now() > deadline) return response;
      expect(response.body.error.data).toMatchObject({ check: 'unknown_key' });
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
});
