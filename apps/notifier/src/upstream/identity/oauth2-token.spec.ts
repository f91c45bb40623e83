import { OAuth2TokenError, requestClientCredentialsToken } from './oauth2-token';

const client = { token_url: 'https://idp.example.com/token', client_id: 'relay client', scope: 'a2a read', resource: 'https://planner.example.com' };

function answering(status: number, body: unknown, seen: Array<{ url: string; init: RequestInit | undefined }> = []): typeof fetch {
  return (async (url: string | URL | Request, init?: RequestInit) => {
    seen.push({ url: String(url), init });
    return new Response(typeof body === 'string' ? body : JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
}

describe('requestClientCredentialsToken', () => {
  it('asks with client_secret_basic (form-encoded id and secret), the scope and the resource; reads the bearer token and its lifetime', async () => {
    const seen: Array<{ url: string; init: RequestInit | undefined }> = [];
    const token = await requestClientCredentialsToken(client, 's:cret', answering(200, { access_token: 'tok', token_type: 'Bearer', expires_in: 120 }, seen));
    expect(token).toEqual({ access_token: 'tok', expires_in_s: 120 });
    expect(seen[0].url).toBe('https://idp.example.com/token');
    expect(seen[0].init?.method).toBe('POST');
    const headers = seen[0].init?.headers as Record<string, string>;
    expect(Buffer.from(headers.authorization.replace('Basic ', ''), 'base64').toString()).toBe('relay%20client:s%3Acret');
    expect(Object.fromEntries(new URLSearchParams(String(seen[0].init?.body)))).toEqual({
      grant_type: 'client_credentials',
      scope: 'a2a read',
      resource: 'https://planner.example.com',
    });
    // No expires_in: kept five minutes.
    expect((await requestClientCredentialsToken(client, 's', answering(200, { access_token: 'tok', token_type: 'bearer' }))).expires_in_s).toBe(300);
  });

  it.each([
    [401, { error: 'invalid_client' }, 'auth.secret', 'the token URL answered 401 (invalid_client)'],
    [400, { error: 'invalid_scope' }, 'auth.scope', 'the token URL answered 400 (invalid_scope)'],
    [400, { error: 'invalid_target' }, 'auth.resource', 'the token URL answered 400 (invalid_target)'],
    [500, 'oops', 'auth', 'the token URL answered 500'],
    [200, { access_token: 'tok', token_type: 'DPoP' }, 'auth.token_url', 'the token URL did not answer with a bearer access token'],
    [200, { token_type: 'bearer' }, 'auth.token_url', 'the token URL did not answer with a bearer access token'],
  ])('an answer %s %j is an OAuth2TokenError on %s', async (status, body, field, message) => {
    const refused = requestClientCredentialsToken(client, 's', answering(status, body));
    await expect(refused).rejects.toBeInstanceOf(OAuth2TokenError);
    await expect(refused).rejects.toMatchObject({ field, message });
  });

  it('a token URL that cannot be reached names it', async () => {
    const failing = (async () => {
      throw new Error('connect ECONNREFUSED');
    }) as unknown as typeof fetch;
    await expect(requestClientCredentialsToken(client, 's', failing)).rejects.toMatchObject({
      field: 'auth.token_url',
      message: 'the token URL https://idp.example.com/token could not be asked (connect ECONNREFUSED)',
    });
  });
});
