import { Inject, Injectable } from '@nestjs/common';
import { API_KEY_PATTERN, RelayError, type AgentIdentity } from '@app/contracts';
import { DirectoryLookups } from '../directory/directory-lookups';
import { AuthFailureThrottle } from './auth-failure-throttle';
import { JWT_PATTERN, TokenVerifier } from './token-verifier';

export type RequestHeaders = Record<string, string | string[] | undefined>;

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : value;
}

/**
 * The API key a request carries: `Authorization: Bearer <key>` or `X-API-Key: <key>`. Returns
 * undefined when neither header is there; throws when a header is there but unusable.
 */
export function extractApiKey(headers: RequestHeaders): string | undefined {
  const authorization = single(headers['authorization'])?.trim();
  const headerKey = single(headers['x-api-key'])?.trim();
  let bearer: string | undefined;
  if (authorization) {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!match) throw new RelayError('unauthenticated', 'The Authorization header must be "Bearer <api key>"');
    bearer = match[1];
  }
  if (bearer !== undefined && headerKey !== undefined && headerKey !== '' && headerKey !== bearer) {
    throw new RelayError('unauthenticated', 'Authorization and X-API-Key carry different keys');
  }
  return bearer ?? (headerKey || undefined);
}

/**
 * Authenticates an agent from its API key, or from a bearer JWT of a configured identity provider
 * (told apart by shape), through the directory, whose answer the edge keeps at most a second (see
 * DirectoryLookups): a revoked key or a disabled agent is refused by every edge replica within
 * that second, whatever the token's lifetime.
 */
@Injectable()
export class AgentAuthenticator {
  constructor(
    @Inject(DirectoryLookups) private readonly directory: DirectoryLookups,
    @Inject(AuthFailureThrottle) private readonly failures: AuthFailureThrottle,
    @Inject(TokenVerifier) private readonly tokens: TokenVerifier,
  ) {}

  /**
   * `address` is the client's. A well-formed key goes to the directory (through its cache) unless
   * the key itself is past its failure budget, or its address is and the key could not be valid
   * (the key filter does not list it and this edge never accepted it): then 429 without a lookup
   * (see AuthFailureThrottle).
   */
  async authenticate(headers: RequestHeaders, address = 'unknown'): Promise<AgentIdentity> {
    let key: string | undefined;
    try {
      key = extractApiKey(headers);
    } catch (error) {
      this.refuse(address, undefined);
      throw error;
    }
    if (key === undefined) throw new RelayError('unauthenticated', 'Missing API key: send Authorization: Bearer <key> or X-API-Key: <key>');
    if (this.tokens.enabled && !API_KEY_PATTERN.test(key) && JWT_PATTERN.test(key)) return this.authenticateToken(key, address);
    // Only agent keys get past this: the admin token (or anything else) never has the key format.
    if (!API_KEY_PATTERN.test(key)) {
      this.refuse(address, key);
      throw new RelayError('unauthenticated', 'Malformed API key');
    }
    this.failures.assertAllowed(address, key);
    try {
      const identity = await this.directory.authenticate(key);
      this.failures.recordSuccess(key);
      return identity;
    } catch (error) {
      if (error instanceof RelayError && error.reason === 'unauthenticated') this.failures.recordFailure(address, key);
      throw error;
    }
  }

  /**
   * A bearer JWT: checks that need no I/O first (shape, algorithm, issuer), then the token's own
   * failure budget, the signature and claims (or the edge's verified-token cache), and the agent it
   * names with the directory. Its address's budget does not apply: the throttle stops guessing, and
   * a token's signature cannot be guessed, so an address throttled for bad keys (a NAT shared with a
   * guesser, say) still gets its new tokens verified. A refused token is counted for its address
   * and itself. A 503 for an unreachable identity provider is not a failure of the caller.
   */
  private async authenticateToken(token: string, address: string): Promise<AgentIdentity> {
    try {
      this.tokens.precheck(token);
    } catch (error) {
      this.refuse(address, token);
      throw error;
    }
    this.failures.assertSecretAllowed(token);
    try {
      const verified = await this.tokens.verify(token);
      const identity = await this.directory.authenticateToken(verified.issuer, verified.subject, verified.handle);
      this.failures.recordSuccess(token);
      return identity;
    } catch (error) {
      if (error instanceof RelayError && error.reason === 'unauthenticated') this.failures.recordFailure(address, token);
      throw error;
    }
  }

  /** A credential refused without I/O: 429 once its address (or the secret) is past its budget, else counted. */
  private refuse(address: string, credential: string | undefined): void {
    this.failures.assertAllowed(address, credential);
    this.failures.recordFailure(address, credential);
  }
}
