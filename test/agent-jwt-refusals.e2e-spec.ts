import { createHmac, createPublicKey, randomUUID, type JsonWebKey } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import request from 'supertest';
import { eventually } from './support/eventually';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { TestOpenIdProvider } from './support/openid-provider';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

const now = (): number => Math.floor(Date.now() / 1000);

describe('bearer JWTs refused with the check that failed, never echoing the token', () => {
  let idp: TestOpenIdProvider;
  let relay: RelayHarness;
  let org: string;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;

  beforeAll(async () => {
    idp = await TestOpenIdProvider.start({
      clients: [{ clientId: 'alice-machine', clientSecret: 'alice-machine-secret-0123456789' }],
    });
    relay = await RelayHarness.start({
      env: { RELAY_OIDC_ISSUERS: JSON.stringify([{ issuer: idp.issuer, audience: idp.audience }]), RELAY_OIDC_JWKS_COOLDOWN_MS: '1000' },
    });
    org = `jwtno${randomUUID().slice(0, 6)}`;
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
    idp.addClient({ clientId: 'alice-machine', clientSecret: 'alice-machine-secret-0123456789', claims: { agentrelay_handle: alice.agent.handle } });
  });

  afterAll(async () => {
    await relay?.stop();
    await idp?.stop();
  });

  /** A token the provider's own key signs for alice, with the claims given. */
  function aliceToken(claims: Record<string, unknown> = {}): Promise<string> {
    return idp.signJwt({ sub: 'alice-machine', agentrelay_handle: alice.agent.handle, ...claims });
  }

  function jsonRpc(token: string): Promise<request.Response> {
    return request(relay.url).post('/a2a').set('authorization', `Bearer ${token}`).send({ jsonrpc: '2.0', id: 7, method: 'tasks/list', params: {} });
  }

  function httpJson(token: string): Promise<request.Response> {
    return request(relay.url).get(`/a2a/${bob.agent.handle}/tasks`).set('authorization', `Bearer ${token}`);
  }

  /** 401 on both bindings, the check in JSON-RPC's error data and in WWW-Authenticate, the token nowhere in the answer. */
  async function expectRefused(token: string, check: string, description: RegExp): Promise<void> {
    const rpc = await jsonRpc(token);
    expect(rpc.status).toBe(401);
    expect(rpc.body.error).toMatchObject({ code: -32000, data: { reason: 'unauthenticated', error: 'invalid_token', check } });
    expect(rpc.body.error.message).toMatch(description);
    expect(rpc.headers['www-authenticate']).toMatch(/^Bearer realm="agentrelay", error="invalid_token", error_description="[^"]+"$/);
    expect(rpc.headers['www-authenticate']).toMatch(description);

    const rest = await httpJson(token);
    expect(rest.status).toBe(401);
    expect(rest.headers['www-authenticate']).toBe(rpc.headers['www-authenticate']);
    expect(rest.body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
    expect(rest.body.error.message).toMatch(description);

    for (const answer of [rpc, rest]) {
      const everything = `${JSON.stringify(answer.headers)}${answer.text}`;
      for (const segment of token.split('.').filter((part) => part.length > 8)) expect(everything).not.toContain(segment);
    }
  }

  it('accepts a well-made token (the refusals below differ from it in one thing each)', async () => {
    expect((await jsonRpc(await aliceToken())).status).toBe(200);
    expect((await httpJson(await aliceToken())).status).toBe(200);
    expect((await jsonRpc(await idp.clientCredentialsToken('alice-machine'))).status).toBe(200);
  });

  it('refuses an expired token', async () => {
    const expired = await aliceToken({ iat: now() - 7200, exp: now() - 3600 });
    await expectRefused(expired, 'expired', /has expired/);
    // A2A v1.0 JSON-RPC: the same in the ErrorInfo's metadata.
    const v1 = await request(relay.url)
      .post(`/a2a/${bob.agent.handle}`)
      .set('authorization', `Bearer ${expired}`)
      .set('a2a-version', '1.0')
      .send({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} });
    expect(v1.status).toBe(401);
    expect(v1.body.error.data[0].metadata).toMatchObject({ relay_reason: 'unauthenticated', error: 'invalid_token', check: 'expired' });
  });

  it('refuses a token that is not yet valid', async () => {
    await expectRefused(await aliceToken({ nbf: now() + 3600 }), 'not_yet_valid', /not yet valid/);
  });

  it('refuses a token from the token endpoint for another audience', async () => {
    const token = await idp.clientCredentialsToken('alice-machine', { resource: 'https://another-service.example' });
    await expectRefused(token, 'audience', /aud is not/);
  });

  it('refuses a token of an issuer that is not configured, signed or not by that issuer', async () => {
    await expectRefused(await aliceToken({ iss: 'https://idp.elsewhere.example' }), 'issuer', /is not a configured issuer/);
    const { privateKey } = await generateKeyPair('ES256');
    const foreign = await new SignJWT({ sub: 'alice-machine', agentrelay_handle: alice.agent.handle, aud: idp.audience })
      .setProtectedHeader({ alg: 'ES256', kid: 'foreign' })
      .setIssuer('https://idp.elsewhere.example')
      .setExpirationTime('5m')
      .sign(privateKey);
    await expectRefused(foreign, 'issuer', /is not a configured issuer/);
  });

  it('refuses a token whose kid is in no JWKS of its issuer, after fetching that JWKS again once', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const token = await new SignJWT({ sub: 'alice-machine', agentrelay_handle: alice.agent.handle })
      .setProtectedHeader({ alg: 'RS256', kid: 'not-a-kid-of-the-idp' })
      .setIssuer(idp.issuer)
      .setAudience(idp.audience)
      .setExpirationTime('5m')
      .sign(privateKey);
    // Past the cooldown (1 s here) since the relay's last fetch of the JWKS, an unknown kid fetches it once more.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const before = idp.requestCount('/jwks');
    const rpc = await jsonRpc(token);
    expect(rpc.status).toBe(401);
    expect(rpc.body.error.data).toMatchObject({ error: 'invalid_token', check: 'unknown_key' });
    expect(idp.requestCount('/jwks')).toBe(before + 1);
    // Within the cooldown the next unknown kid is refused without another fetch.
    await expectRefused(token, 'unknown_key', /no key of the issuer's JWKS matches/);
    expect(idp.requestCount('/jwks')).toBe(before + 1);
  });

  it('refuses alg "none" before any key lookup', async () => {
    const token = `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ iss: idp.issuer, aud: idp.audience, sub: 'alice-machine', agentrelay_handle: alice.agent.handle, exp: now() + 300 })}.`;
    const jwksFetches = idp.requestCount('/jwks');
    await expectRefused(token, 'algorithm', /alg 'none' is not allowed/);
    expect(idp.requestCount('/jwks')).toBe(jwksFetches);
  });

  it('refuses HS256 signed with the public key of the IdP (key confusion)', async () => {
    const publicPem = createPublicKey({ key: idp.currentKey.publicJwk as JsonWebKey, format: 'jwk' })
      .export({ type: 'spki', format: 'pem' })
      .toString();
    const header = base64url({ alg: 'HS256', typ: 'JWT', kid: idp.currentKey.kid });
    const payload = base64url({ iss: idp.issuer, aud: idp.audience, sub: 'alice-machine', agentrelay_handle: alice.agent.handle, exp: now() + 300 });
    const jwksFetches = idp.requestCount('/jwks');
    for (const secret of [publicPem, JSON.stringify(await exportJWK(createPublicKey(publicPem)))]) {
      const signature = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url');
      await expectRefused(`${header}.${payload}.${signature}`, 'algorithm', /alg 'HS256' is not allowed/);
    }
    expect(idp.requestCount('/jwks')).toBe(jwksFetches);
  });

  it('refuses a token signed by the right kid with another key', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const token = await new SignJWT({ sub: 'alice-machine', agentrelay_handle: alice.agent.handle })
      .setProtectedHeader({ alg: 'RS256', kid: idp.currentKey.kid })
      .setIssuer(idp.issuer)
      .setAudience(idp.audience)
      .setExpirationTime('5m')
      .sign(privateKey);
    await expectRefused(token, 'signature', /signature does not verify/);
  });

  it('refuses a token for an agent that was disabled, though the same token was accepted before', async () => {
    const dave = await registerAgent(relay, { handle: uniqueHandle('dave', org), name: 'Dave' });
    const token = await idp.signJwt({ sub: 'dave-machine', agentrelay_handle: dave.agent.handle });
    expect((await jsonRpc(token)).status).toBe(200);
    await request(relay.url).delete(`/admin/agents/${dave.agent.handle}`).set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`).expect(200);
    await eventually(async () => expect((await jsonRpc(token)).status).toBe(401), 10_000);
    await expectRefused(token, 'agent_disabled', /is disabled/);
  });

  it('refuses a token whose handle claim names another agent than the one its sub is mapped to', async () => {
    const erin = await registerAgent(relay, { handle: uniqueHandle('erin', org), name: 'Erin' });
    await request(relay.url)
      .put(`/admin/agents/${erin.agent.handle}/token-subject`)
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send({ issuer: idp.issuer, subject: 'erin-machine' })
      .expect(200);
    expect((await jsonRpc(await idp.signJwt({ sub: 'erin-machine', agentrelay_handle: erin.agent.handle }))).status).toBe(200);
    await expectRefused(await idp.signJwt({ sub: 'erin-machine', agentrelay_handle: alice.agent.handle }), 'subject_mismatch', /mapped to/);
    // Nor may another subject of the same issuer claim erin's handle.
    await expectRefused(await idp.signJwt({ sub: 'mallory-machine', agentrelay_handle: erin.agent.handle }), 'subject_mismatch', /mapped to another subject/);
  });

  it('refuses a token without sub or naming no registered agent', async () => {
    await expectRefused(await idp.signJwt({ agentrelay_handle: alice.agent.handle }), 'claims', /sub claim/);
    await expectRefused(await idp.signJwt({ sub: 'x', agentrelay_handle: `nobody@${org}` }), 'unknown_agent', /not a registered agent/);
  });

  it('counts refused tokens in the failed-login throttle like bad keys', async () => {
    const throttled = await RelayHarness.start({
      env: { RELAY_OIDC_ISSUERS: JSON.stringify([{ issuer: idp.issuer, audience: idp.audience }]), RELAY_AUTH_FAILURES_PER_WINDOW: '3' },
    });
    try {
      const expired = await aliceToken({ iat: now() - 7200, exp: now() - 3600 });
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const refused = await request(throttled.url)
          .post('/a2a')
          .set('authorization', `Bearer ${expired}`)
          .send({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} });
        expect(refused.status).toBe(401);
      }
      const blocked = await request(throttled.url)
        .post('/a2a')
        .set('authorization', `Bearer ${expired}`)
        .send({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} });
      expect(blocked.status).toBe(429);
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await throttled.stop();
    }
  });
});
