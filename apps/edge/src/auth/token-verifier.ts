import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, errors as jose, jwtVerify, type JWTPayload } from 'jose';
import { RelayError } from '@app/contracts';
import { EdgeConfig } from '../edge.config';
import { parseTokenIssuers, type TokenIssuer } from '../token-issuers';

/** Asymmetric signatures only: `none` and the HMAC algorithms (whose key would be public) are refused before any key lookup. */
export const TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** Three base64url segments; the signature may be empty only for `alg: none`, which is refused with its reason. */
export const JWT_PATTERN = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Longer tokens are refused without being decoded. */
export const MAX_TOKEN_CHARS = 8192;

/** Verified tokens kept per edge; past it the oldest go. */
const MAX_VERIFIED_TOKENS = 10_000;

/** The timeout of each request to an identity provider (discovery, JWKS). */
const IDP_TIMEOUT_MS = 5000;

/** After an identity provider could not be reached, new tokens of it get 503 for this long without another attempt. */
const IDP_RETRY_AFTER_SECONDS = 5;

/** What a verified token says about its bearer. */
export interface VerifiedToken {
  issuer: string;
  subject: string;
  /** The issuer's handle claim, when the token has it. */
  handle?: string;
  /** `exp`, in ms. */
  expiresAt: number;
}

interface IssuerState {
  config: TokenIssuer;
  discovery?: Promise<Discovery>;
  jwks?: ReturnType<typeof createRemoteJWKSet>;
  unreachableUntil: number;
}

export interface Discovery {
  jwksUri: string;
  tokenEndpoint?: string;
}

/** A token refused: 401 `invalid_token`, `data.check` names the check, the message says why (never the token). */
export function invalidToken(check: string, description: string): RelayError {
  return new RelayError('unauthenticated', `Invalid token: ${description}`, { error: 'invalid_token', check, error_description: description });
}

/**
 * Verifies agents' bearer JWTs from the configured identity providers (`RELAY_OIDC_ISSUERS`) with
 * jose: each issuer's JWKS URI comes from its discovery document, the JWKS is cached and fetched
 * again for an unknown `kid` at most once per `RELAY_OIDC_JWKS_COOLDOWN_MS`. A verified token is
 * kept (by its SHA-256) until its `exp`, so the hot path is a digest and a map lookup.
 */
@Injectable()
export class TokenVerifier {
  private readonly logger = new Logger(TokenVerifier.name);
  private readonly issuers = new Map<string, IssuerState>();
  private readonly verified = new Map<string, VerifiedToken>();

  constructor(@Inject(EdgeConfig) private readonly config: EdgeConfig) {
    for (const issuer of parseTokenIssuers(config.RELAY_OIDC_ISSUERS)) this.issuers.set(issuer.issuer, { config: issuer, unreachableUntil: 0 });
  }

  get enabled(): boolean {
    return this.issuers.size > 0;
  }

  hasIssuer(issuer: string): boolean {
    return this.issuers.has(issuer);
  }

  /** The token endpoints of the issuers whose discovery answers (for the agents' cards); an unreachable one is left out. */
  async tokenEndpoints(): Promise<string[]> {
    const endpoints = await Promise.all(
      [...this.issuers.values()].map((state) =>
        this.discover(state).then(
          (found) => found.tokenEndpoint,
          () => undefined,
        ),
      ),
    );
    return endpoints.filter((endpoint): endpoint is string => endpoint !== undefined);
  }

  /**
   * The claims of a valid token, or `unauthenticated` naming the failed check; `service_unavailable`
   * (503, Retry-After) when the token's issuer cannot be reached to verify a token not seen before.
   */
  async verify(token: string, now = Date.now()): Promise<VerifiedToken> {
    const digest = createHash('sha256').update(token).digest('base64');
    const known = this.verified.get(digest);
    if (known) {
      if (known.expiresAt > now) return known;
      this.verified.delete(digest);
    }
    const { state, algorithm } = this.precheck(token);
    const verified = await this.verifySignatureAndClaims(token, state, algorithm);
    if (this.verified.size >= MAX_VERIFIED_TOKENS) this.forgetOldest(now);
    this.verified.set(digest, verified);
    return verified;
  }

  /** What is checkable without I/O: size, shape, algorithm and a configured issuer. Throws `invalid_token` otherwise. */
  precheck(token: string): { state: IssuerState; algorithm: string } {
    if (token.length > MAX_TOKEN_CHARS) throw invalidToken('malformed', `a token is at most ${MAX_TOKEN_CHARS} characters`);
    if (!JWT_PATTERN.test(token)) throw invalidToken('malformed', 'not a JWT (three base64url segments)');
    let header: ReturnType<typeof decodeProtectedHeader>;
    let payload: JWTPayload;
    try {
      header = decodeProtectedHeader(token);
      payload = decodeJwt(token);
    } catch {
      throw invalidToken('malformed', 'the header or payload is not base64url JSON');
    }
    const algorithm = typeof header.alg === 'string' ? header.alg : '';
    if (!TOKEN_ALGORITHMS.includes(algorithm)) {
      throw invalidToken('algorithm', `alg '${printable(algorithm)}' is not allowed: only asymmetric signatures (RS*, PS*, ES*, EdDSA)`);
    }
    const state = typeof payload.iss === 'string' ? this.issuers.get(payload.iss) : undefined;
    if (!state) {
      throw invalidToken(
        'issuer',
        typeof payload.iss === 'string' ? `iss '${printable(payload.iss)}' is not a configured issuer` : 'the token has no iss claim',
      );
    }
    return { state, algorithm };
  }

  private async verifySignatureAndClaims(token: string, state: IssuerState, algorithm: string): Promise<VerifiedToken> {
    const { config } = state;
    const jwks = await this.jwksOf(state);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: config.issuer,
        audience: config.audiences,
        algorithms: [algorithm],
        clockTolerance: this.config.RELAY_OIDC_CLOCK_SKEW_SECONDS,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (error) {
      throw this.refusal(error, state);
    }
    const handle = payload[config.handleClaim];
    if (handle !== undefined && typeof handle !== 'string') throw invalidToken('handle_claim', `the ${config.handleClaim} claim must be a string`);
    if (typeof payload.sub !== 'string' || payload.sub === '') throw invalidToken('subject', 'the sub claim must be a non-empty string');
    state.unreachableUntil = 0;
    return { issuer: config.issuer, subject: payload.sub, ...(handle !== undefined ? { handle } : {}), expiresAt: (payload.exp as number) * 1000 };
  }

  /** A jose error as the check that failed, or the identity provider as unreachable. */
  private refusal(error: unknown, state: IssuerState): RelayError {
    if (error instanceof jose.JWTExpired) return invalidToken('expired', 'the token has expired (exp)');
    if (error instanceof jose.JWTClaimValidationFailed) {
      switch (error.claim) {
        case 'nbf':
          return invalidToken('not_yet_valid', 'the token is not yet valid (nbf)');
        case 'aud':
          return invalidToken('audience', `aud is not ${state.config.audiences.map((audience) => `'${audience}'`).join(' or ')}`);
        case 'iss':
          return invalidToken('issuer', `iss is not '${state.config.issuer}'`);
        case 'iat':
          return invalidToken('issued_at', 'iat is not a valid time');
        default:
          return invalidToken('claims', `the ${printable(error.claim)} claim is missing or invalid`);
      }
    }
    if (error instanceof jose.JWKSNoMatchingKey) {
      return invalidToken(
        'unknown_key',
        "no key of the issuer's JWKS matches the token's kid (the JWKS is fetched again for an unknown kid at most once per cooldown)",
      );
    }
    if (error instanceof jose.JWKSMultipleMatchingKeys) return invalidToken('unknown_key', 'several keys of the JWKS match the token and none verified it');
    if (error instanceof jose.JWSSignatureVerificationFailed) return invalidToken('signature', 'the signature does not verify');
    if (error instanceof jose.JOSEAlgNotAllowed) return invalidToken('algorithm', 'the algorithm does not match the key');
    if (error instanceof jose.JWTInvalid || error instanceof jose.JWSInvalid) return invalidToken('malformed', 'the token is not a valid JWS');
    if (error instanceof jose.JOSENotSupported) return invalidToken('algorithm', 'the token uses an algorithm or key the relay does not support');
    return this.unreachable(state, error);
  }

  private async jwksOf(state: IssuerState): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (state.jwks) return state.jwks;
    const { jwksUri } = await this.discover(state);
    state.jwks ??= createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: IDP_TIMEOUT_MS, cooldownDuration: this.config.RELAY_OIDC_JWKS_COOLDOWN_MS });
    return state.jwks;
  }

  /** The issuer's discovery document (once; a failure is remembered IDP_RETRY_AFTER_SECONDS and asked again after). */
  discover(state: IssuerState): Promise<Discovery> {
    if (state.unreachableUntil > Date.now()) return Promise.reject(this.unavailable(state));
    state.discovery ??= this.fetchDiscovery(state.config).catch((error: unknown) => {
      state.discovery = undefined;
      throw this.unreachable(state, error);
    });
    return state.discovery;
  }

  private async fetchDiscovery(issuer: TokenIssuer): Promise<Discovery> {
    const url = `${issuer.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const response = await fetch(url, { signal: AbortSignal.timeout(IDP_TIMEOUT_MS), redirect: 'error', headers: { accept: 'application/json' } });
    if (response.status !== 200) throw new Error(`discovery answered ${response.status}`);
    const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown; token_endpoint?: unknown };
    if (document.issuer !== issuer.issuer) throw new Error(`discovery names the issuer ${String(document.issuer)}, not ${issuer.issuer}`);
    if (typeof document.jwks_uri !== 'string') throw new Error('discovery has no jwks_uri');
    return { jwksUri: document.jwks_uri, ...(typeof document.token_endpoint === 'string' ? { tokenEndpoint: document.token_endpoint } : {}) };
  }

  private unreachable(state: IssuerState, error: unknown): RelayError {
    if (error instanceof RelayError) return error;
    if (state.unreachableUntil <= Date.now()) {
      this.logger.warn({ issuer: state.config.issuer, err: error }, 'identity provider unreachable: new tokens of it get 503');
    }
    state.unreachableUntil = Date.now() + IDP_RETRY_AFTER_SECONDS * 1000;
    return this.unavailable(state);
  }

  private unavailable(state: IssuerState): RelayError {
    return new RelayError('service_unavailable', `The identity provider ${state.config.issuer} cannot be reached to verify this token; retry later`, {
      identity_provider: state.config.issuer,
      retry_after_seconds: IDP_RETRY_AFTER_SECONDS,
    });
  }

  private forgetOldest(now: number): void {
    for (const [digest, token] of this.verified) if (token.expiresAt <= now) this.verified.delete(digest);
    while (this.verified.size >= MAX_VERIFIED_TOKENS) this.verified.delete(this.verified.keys().next().value as string);
  }
}

/** A claim quoted in an error: short, printable ASCII, never more than 100 characters. */
function printable(value: string): string {
  const cleaned = value.replace(/[^\x20-\x7e]/g, '?').replace(/["\\]/g, "'");
  return cleaned.length > 100 ? `${cleaned.slice(0, 100)}...` : cleaned;
}

/**
 * The `WWW-Authenticate` of a 401 (RFC 6750): `error="invalid_token"` and the failed check for a
 * refused JWT, the bare challenge otherwise.
 */
export function bearerChallenge(error: RelayError): string {
  const description = error.data?.error_description;
  if (error.data?.error !== 'invalid_token' || typeof description !== 'string') return 'Bearer realm="agentrelay"';
  // RFC 6750: the description is printable ASCII without `"` or `\`.
  const quotable = description.replace(/[^\x20-\x7e]/g, '?').replace(/["\\]/g, "'");
  return `Bearer realm="agentrelay", error="invalid_token", error_description="${quotable}"`;
}
