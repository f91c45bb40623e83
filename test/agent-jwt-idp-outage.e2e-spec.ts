import { randomUUID } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import request from 'supertest';
import { eventually } from './support/eventually';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { TestOpenIdProvider } from './support/openid-provider';
import { RelayHarness } from './support/relay-harness';

describe('the IdP down: tokens already verified keep working until they expire, new ones get 503 with Retry-After', () => {
  let idp: TestOpenIdProvider;
  let relay: RelayHarness;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;

  function jsonRpc(url: string, token: string): Promise<request.Response> {
    return request(url).post('/a2a').set('authorization', `Bearer ${token}`).send({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} });
  }

  function httpJson(url: string, token: string): Promise<request.Response> {
    return request(url).get(`/a2a/${bob.agent.handle}/tasks`).set('authorization', `Bearer ${token}`);
  }

  function expectUnavailable(answer: request.Response): void {
    expect(answer.status).toBe(503);
    expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
    expect(answer.headers['www-authenticate']).toBeUndefined();
    expect(answer.text).toContain(idp.issuer);
  }

  beforeAll(async () => {
    const org = `jwtdown${randomUUID().slice(0, 6)}`;
    const handle = uniqueHandle('alice', org);
    // Short-lived tokens and no clock skew, so that a token expires within the test.
    idp = await TestOpenIdProvider.start({
      clients: [
        { clientId: 'alice-machine', clientSecret: 'alice-machine-secret-0123456789', claims: { agentrelay_handle: handle }, tokenTtlSeconds: 6 },
        { clientId: 'alice-worker', clientSecret: 'alice-worker-secret-0123456789', claims: { agentrelay_handle: handle }, tokenTtlSeconds: 600 },
      ],
    });
    relay = await RelayHarness.start({
      env: {
        RELAY_OIDC_ISSUERS: JSON.stringify([{ issuer: idp.issuer, audience: idp.audience }]),
        RELAY_OIDC_CLOCK_SKEW_SECONDS: '0',
        RELAY_OIDC_JWKS_COOLDOWN_MS: '0',
      },
    });
    alice = await registerAgent(relay, { handle, name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
  });

  afterAll(async () => {
    await relay?.stop();
    await idp?.stop();
  });

  it('serves the verified token, answers 503 for a token signed by a key it has not fetched, and 401 once the verified one expired', async () => {
    const verified = await idp.clientCredentialsToken('alice-machine');
    expect((await jsonRpc(relay.url, verified)).status).toBe(200);
    expect((await httpJson(relay.url, verified)).status).toBe(200);

    await idp.rotateSigningKey();
    const unseen = await idp.clientCredentialsToken('alice-worker');
    expect(decodeProtectedHeader(unseen).kid).toBe(idp.currentKey.kid);
    await idp.stop();

    expect((await jsonRpc(relay.url, verified)).status).toBe(200);
    expect((await httpJson(relay.url, verified)).status).toBe(200);

    const rpc = await jsonRpc(relay.url, unseen);
    expectUnavailable(rpc);
    expect(rpc.body.error).toMatchObject({ code: -32050, data: { reason: 'service_unavailable', identity_provider: idp.issuer } });
    expectUnavailable(await httpJson(relay.url, unseen));

    const expiresAt = (decodeJwt(verified).exp as number) * 1000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now() + 1100)));
    const expired = await jsonRpc(relay.url, verified);
    expect(expired.status).toBe(401);
    expect(expired.body.error.data).toMatchObject({ error: 'invalid_token', check: 'expired' });
    expectUnavailable(await jsonRpc(relay.url, unseen));

    // The IdP back: the unseen token is verified once the relay tries the IdP again (after its Retry-After).
    await idp.start();
    await eventually(async () => expect((await jsonRpc(relay.url, unseen)).status).toBe(200), 30_000, 500);
    expect(alice.agent.handle).toBe(decodeJwt(unseen).agentrelay_handle);
  });

  it('an edge that starts while the IdP is down answers 503 to tokens and still serves API keys and cards', async () => {
    const token = await idp.clientCredentialsToken('alice-machine');
    await idp.stop();
    try {
      const edge = await relay.startEdge();
      const url = relay.urlOf(edge);
      expectUnavailable(await jsonRpc(url, token));
      expect((await jsonRpc(url, alice.api_key)).status).toBe(200);
      const card = await request(url).get(`/a2a/${bob.agent.handle}/.well-known/agent-card.json`).expect(200);
      expect(Object.keys(card.body.securitySchemes)).toEqual(['bearer', 'apiKey']);
    } finally {
      await idp.start();
    }
  });
});
