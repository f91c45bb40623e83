import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { TestOpenIdProvider } from './openid-provider';

describe('TestOpenIdProvider', () => {
  let provider: TestOpenIdProvider;

  beforeAll(async () => {
    provider = await TestOpenIdProvider.start({
      clients: [{ clientId: 'agent-alice', clientSecret: 'alice-secret-0123456789', claims: { agentrelay_handle: 'alice' } }],
    });
  });

  afterAll(() => provider.stop());

  async function discovery(): Promise<{ issuer: string; jwks_uri: string; token_endpoint: string }> {
    const response = await fetch(provider.discoveryUrl);
    expect(response.status).toBe(200);
    return (await response.json()) as { issuer: string; jwks_uri: string; token_endpoint: string };
  }

  it('publishes a discovery document naming its JWKS and token endpoint on loopback', async () => {
    const document = await discovery();
    expect(document.issuer).toBe(provider.issuer);
    expect(document.token_endpoint).toBe(provider.tokenEndpoint);
    expect(new URL(document.jwks_uri).hostname).toBe('127.0.0.1');
  });

  it('issues client-credentials access tokens as JWTs for the audience, with the client claims', async () => {
    const token = await provider.clientCredentialsToken('agent-alice');
    const jwks = createRemoteJWKSet(new URL((await discovery()).jwks_uri));
    const { payload, protectedHeader } = await jwtVerify(token, jwks, { issuer: provider.issuer, audience: provider.audience });
    expect(protectedHeader.kid).toBe(provider.currentKey.kid);
    expect(payload).toMatchObject({ sub: 'agent-alice', agentrelay_handle: 'alice', client_id: 'agent-alice' });
    expect(payload.exp).toBeGreaterThan(Date.now() / 1000);
  });

  it('signs with a new kid after a rotation and keeps the previous key published', async () => {
    const previous = provider.currentKey.kid;
    const rotated = await provider.rotateSigningKey();
    const token = await provider.clientCredentialsToken('agent-alice');
    expect(decodeProtectedHeader(token).kid).toBe(rotated.kid);
    const published = (await (await fetch((await discovery()).jwks_uri)).json()) as { keys: { kid: string; d?: string }[] };
    expect(published.keys.map((key) => key.kid)).toEqual([rotated.kid, previous]);
    expect(published.keys.every((key) => key.d === undefined)).toBe(true);
  });

  it('refuses connections while stopped and answers again on the same address after start', async () => {
    const issuer = provider.issuer;
    await provider.stop();
    await expect(fetch(provider.discoveryUrl)).rejects.toThrow();
    await provider.start();
    expect(provider.issuer).toBe(issuer);
    expect((await discovery()).issuer).toBe(issuer);
  });
});
