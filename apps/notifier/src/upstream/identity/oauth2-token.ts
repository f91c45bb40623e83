import type { UpstreamOAuth2Client } from './upstream-credential.entity';

/** The largest token answer the relay reads. */
export const TOKEN_ANSWER_BYTES = 64 * 1024;
/** A token answer without `expires_in` is kept this long. */
const DEFAULT_EXPIRES_IN_S = 300;

export interface OAuth2Token {
  access_token: string;
  expires_in_s: number;
}

/** The token URL refused the client, or could not be asked; `field` names what the admin gave that it is about. */
export class OAuth2TokenError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'OAuth2TokenError';
  }
}

async function boundedText(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > TOKEN_ANSWER_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new OAuth2TokenError('auth.token_url', `the token answer is larger than ${TOKEN_ANSWER_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * One client-credentials grant (RFC 6749 §4.4) at the client's token URL: the client id and secret
 * in HTTP Basic (`client_secret_basic`, form-encoded as §2.3.1 says), the scope and the resource
 * (RFC 8707) when the client names them. The answer must be a bearer token.
 */
export async function requestClientCredentialsToken(client: UpstreamOAuth2Client, secret: string, fetchImpl: typeof fetch): Promise<OAuth2Token> {
  const body = new URLSearchParams({ grant_type: 'client_credentials' });
  if (client.scope) body.set('scope', client.scope);
  if (client.resource) body.set('resource', client.resource);
  const basic = Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(secret)}`).toString('base64');
  let response: Response;
  try {
    response = await fetchImpl(client.token_url, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: body.toString(),
      redirect: 'manual',
    });
  } catch (error) {
    throw new OAuth2TokenError('auth.token_url', `the token URL ${client.token_url} could not be asked (${(error as Error).message})`);
  }
  const text = await boundedText(response);
  let answer: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === 'object' && parsed !== null) answer = parsed as Record<string, unknown>;
  } catch {
    // Named below: not a token answer.
  }
  if (!response.ok) {
    const error = typeof answer.error === 'string' ? answer.error.slice(0, 100) : null;
    const field = error === 'invalid_client' ? 'auth.secret' : error === 'invalid_scope' ? 'auth.scope' : error === 'invalid_target' ? 'auth.resource' : 'auth';
    throw new OAuth2TokenError(field, `the token URL answered ${response.status}${error ? ` (${error})` : ''}`);
  }
  const token = typeof answer.access_token === 'string' && answer.access_token !== '' ? answer.access_token : null;
  const type = typeof answer.token_type === 'string' ? answer.token_type.toLowerCase() : 'bearer';
  if (!token || type !== 'bearer' || !/^[\x21-\x7e]+$/.test(token)) {
    throw new OAuth2TokenError('auth.token_url', 'the token URL did not answer with a bearer access token');
  }
  const expiresIn =
    typeof answer.expires_in === 'number' && Number.isFinite(answer.expires_in) && answer.expires_in > 0 ? answer.expires_in : DEFAULT_EXPIRES_IN_S;
  return { access_token: token, expires_in_s: expiresIn };
}
