import { Inject, Injectable, Logger } from '@nestjs/common';
import { hkdfSync, randomBytes } from 'node:crypto';
import { EncryptJWT, jwtDecrypt } from 'jose';
import * as oidc from 'openid-client';
import { normalizeGrants, strongestRole, type AdminRole, type RoleGrant } from '@app/contracts';
import { grantsFromClaims } from '../admin-roles';
import { EdgeConfig } from '../../edge.config';
import type { ConsolePerson } from './console-sessions';

/** The cookie that carries one sign-in in progress (its PKCE verifier, state and nonce), sealed by the edge. */
export const OIDC_FLOW_COOKIE = 'relay_oidc_flow';
export const OIDC_CALLBACK_PATH = '/admin/session/oidc/callback';
export const OIDC_START_PATH = '/admin/session/oidc/start';

/** How long a person has at the provider's login form before the sign-in must start again. */
export const OIDC_FLOW_TTL_SECONDS = 600;
const DISCOVERY_TIMEOUT_SECONDS = 10;
/** A failed discovery is tried again at most this often, so that a provider that is down is not hammered. */
const REDISCOVERY_INTERVAL_MS = 5000;
const FLOW_KEY_INFO = 'agentrelay console oidc flow';
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

interface SealedFlow {
  state: string;
  nonce: string;
  code_verifier: string;
}

/** Why a sign-in did not complete, and what the person is told (never a token or a secret). */
export class SignInFailure extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 503,
    readonly title: string,
    message: string,
  ) {
    super(message);
    this.name = 'SignInFailure';
  }
}

export interface SignedInPerson {
  person: ConsolePerson;
  /** The strongest of the person's roles (what the console shows). */
  role: AdminRole;
  /** Each org's role, or a relay-wide one (docs/orgs.md#scoped-roles). */
  grants: RoleGrant[];
}

/**
 * People's sign-in to the console through the organisation's OpenID Provider: the authorization
 * code flow with PKCE, state and nonce (openid-client). The provider's metadata is discovered on
 * first use and kept; what a sign-in in progress needs travels in a short-lived cookie sealed with
 * a key every edge derives alike, so the provider may send the person back to any edge.
 */
@Injectable()
export class ConsoleOidc {
  private readonly logger = new Logger(ConsoleOidc.name);
  private readonly flowKey: Uint8Array;
  private discovered?: Promise<oidc.Configuration>;
  private lastDiscoveryFailure = 0;

  constructor(@Inject(EdgeConfig) private readonly config: EdgeConfig) {
    this.flowKey = flowKeyOf(config, () =>
      this.logger.warn(
        'OIDC sign-in: RELAY_CONSOLE_OIDC_CLIENT_SECRET, RELAY_STREAM_ID_KEY and RELAY_ADMIN_TOKEN are unset, so a sign-in completes only on the edge that started it',
      ),
    );
  }

  get enabled(): boolean {
    return this.config.RELAY_CONSOLE_OIDC_ISSUER !== undefined && this.config.RELAY_CONSOLE_OIDC_CLIENT_ID !== undefined;
  }

  /** Where the provider sends people back (RELAY_CONSOLE_OIDC_REDIRECT_URL, else under RELAY_PUBLIC_URL). */
  get redirectUrl(): string {
    return this.config.RELAY_CONSOLE_OIDC_REDIRECT_URL ?? new URL(OIDC_CALLBACK_PATH, this.config.RELAY_PUBLIC_URL).toString();
  }

  /** A new sign-in: the provider's authorization URL to send the browser to, and the sealed flow for its cookie. */
  async start(): Promise<{ authorizationUrl: string; flow: string }> {
    const configuration = await this.configuration();
    const flow: SealedFlow = { state: oidc.randomState(), nonce: oidc.randomNonce(), code_verifier: oidc.randomPKCECodeVerifier() };
    const authorizationUrl = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: this.redirectUrl,
      scope: ['openid', ...this.config.RELAY_CONSOLE_OIDC_SCOPES.split(' ').filter((scope) => scope && scope !== 'openid')].join(' '),
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(flow.code_verifier),
      code_challenge_method: 'S256',
    });
    const sealed = await new EncryptJWT({ ...flow })
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .setIssuedAt()
      .setExpirationTime(`${OIDC_FLOW_TTL_SECONDS}s`)
      .encrypt(this.flowKey);
    return { authorizationUrl: authorizationUrl.toString(), flow: sealed };
  }

  /**
   * Completes a sign-in from the provider's answer (the callback's query string): the flow cookie
   * is opened, the code exchanged with its verifier, the ID token checked (signature, issuer,
   * audience, expiry, nonce) and the person's role read from their claims.
   */
  async finish(
    callbackQuery: string,
    sealedFlow: string | undefined,
    givenRoles: (person: ConsolePerson) => Promise<RoleGrant[]> = () => Promise.resolve([]),
  ): Promise<SignedInPerson> {
    const flow = await this.openFlow(sealedFlow);
    const configuration = await this.configuration();
    const callback = new URL(this.redirectUrl);
    callback.search = callbackQuery;
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(configuration, callback, {
        pkceCodeVerifier: flow.code_verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      throw this.failureOf(error);
    }
    const idToken = tokens.claims();
    if (!idToken) throw new SignInFailure(401, 'Sign-in refused', 'The identity provider answered without an ID token.');
    let claims: Record<string, unknown> = { ...idToken };
    if (configuration.serverMetadata().userinfo_endpoint && tokens.access_token) {
      try {
        const userInfo = await oidc.fetchUserInfo(configuration, tokens.access_token, idToken.sub);
        // What the ID token says wins over userinfo.
        claims = { ...userInfo, ...idToken };
      } catch (error) {
        const failure = this.failureOf(error);
        if (failure.status === 503) throw failure;
        // An access token for another resource (Entra ID's, or one with an audience) is refused by
        // userinfo: the ID token's claims are then all there is.
        this.logger.debug({ reason: failure.message }, 'OIDC sign-in: userinfo refused the access token; the ID token claims are used');
      }
    }
    const person: ConsolePerson = {
      issuer: idToken.iss,
      sub: idToken.sub,
      email: typeof claims.email === 'string' ? claims.email : null,
      // Some providers send the claim as a string; one that sends none has not verified the email.
      email_verified: typeof claims.email === 'string' && (claims.email_verified === true || claims.email_verified === 'true'),
      name: typeof claims.name === 'string' ? claims.name : null,
    };
    // What the claims give, and what admins gave the person through the admin API.
    const grants = normalizeGrants([
      ...grantsFromClaims(claims, {
        roleClaim: this.config.RELAY_CONSOLE_OIDC_ROLE_CLAIM,
        groupsClaim: this.config.RELAY_CONSOLE_OIDC_GROUPS_CLAIM,
        groupRoles: this.config.RELAY_CONSOLE_OIDC_GROUP_ROLES,
      }),
      ...(await givenRoles(person)),
    ]);
    const role = strongestRole(grants);
    if (!role) {
      throw new SignInFailure(
        403,
        'No console role',
        `You signed in as ${person.email ?? person.sub}, but the identity provider gives you no console role: ask for the ${this.config.RELAY_CONSOLE_OIDC_ROLE_CLAIM} claim (admin, operator, approver, viewer or auditor, relay-wide or as org:role) or a group the relay maps to a role, or an admin to give you one (PUT /admin/people/{sub}/roles).`,
      );
    }
    return { person, role, grants };
  }

  private async openFlow(sealedFlow: string | undefined): Promise<SealedFlow> {
    const restart = new SignInFailure(
      400,
      'Sign-in expired',
      'This sign-in was not started in this browser, or took longer than 10 minutes. Start it again from the console.',
    );
    if (!sealedFlow || sealedFlow.length > 2048) throw restart;
    try {
      const { payload } = await jwtDecrypt(sealedFlow, this.flowKey, { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] });
      const { state, nonce, code_verifier } = payload;
      if (typeof state !== 'string' || typeof nonce !== 'string' || typeof code_verifier !== 'string') throw restart;
      return { state, nonce, code_verifier };
    } catch {
      throw restart;
    }
  }

  /** The provider's configuration, discovered once; a failed discovery is tried again after REDISCOVERY_INTERVAL_MS. */
  private configuration(): Promise<oidc.Configuration> {
    if (!this.enabled) throw new SignInFailure(400, 'OIDC sign-in is off', 'This relay has no OpenID Provider configured (RELAY_CONSOLE_OIDC_ISSUER).');
    if (this.discovered === undefined) {
      if (Date.now() - this.lastDiscoveryFailure < REDISCOVERY_INTERVAL_MS) {
        return Promise.reject(unavailable());
      }
      this.discovered = this.discover().catch((error: unknown) => {
        this.discovered = undefined;
        this.lastDiscoveryFailure = Date.now();
        this.logger.warn({ err: error, issuer: this.config.RELAY_CONSOLE_OIDC_ISSUER }, 'OIDC discovery failed');
        throw unavailable();
      });
    }
    return this.discovered;
  }

  private discover(): Promise<oidc.Configuration> {
    const issuer = new URL(this.config.RELAY_CONSOLE_OIDC_ISSUER as string);
    const secret = this.config.RELAY_CONSOLE_OIDC_CLIENT_SECRET;
    return oidc.discovery(
      issuer,
      this.config.RELAY_CONSOLE_OIDC_CLIENT_ID as string,
      secret,
      secret === undefined ? oidc.None() : oidc.ClientSecretBasic(secret),
      {
        timeout: DISCOVERY_TIMEOUT_SECONDS,
        // Plain http only to a provider on this machine (development, tests); anything else needs https.
        ...(issuer.protocol === 'http:' && LOOPBACK_HOSTS.has(issuer.host.replace(/:\d+$/, '')) ? { execute: [oidc.allowInsecureRequests] } : {}),
      },
    );
  }

  private failureOf(error: unknown): SignInFailure {
    if (unreachable(error)) {
      this.logger.warn({ err: error }, 'OIDC sign-in: the identity provider could not be reached');
      return unavailable();
    }
    if (error instanceof oidc.AuthorizationResponseError) {
      return new SignInFailure(
        401,
        'Sign-in refused',
        `The identity provider refused the sign-in: ${error.error}${error.error_description ? ` (${error.error_description})` : ''}.`,
      );
    }
    if (error instanceof oidc.WWWAuthenticateChallengeError) {
      return new SignInFailure(401, 'Sign-in refused', 'The identity provider refused the access token it issued.');
    }
    if (error instanceof oidc.ResponseBodyError) {
      return new SignInFailure(401, 'Sign-in refused', `The identity provider refused the sign-in code: ${error.error}.`);
    }
    if (error instanceof oidc.ClientError) {
      return new SignInFailure(
        401,
        'Sign-in refused',
        `The identity provider's answer did not pass the relay's checks (${error.code ?? 'invalid response'}). Start again.`,
      );
    }
    this.logger.warn({ err: error }, 'OIDC sign-in: the identity provider could not be reached');
    return unavailable();
  }
}

/** Whether an error (or one it wraps) is the provider not answering: refused, unresolvable, timed out. */
function unreachable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const { name, message, code } = current as { name?: unknown; message?: unknown; code?: unknown };
    if ((name === 'TypeError' && message === 'fetch failed') || name === 'AbortError' || name === 'TimeoutError') return true;
    if (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|UND_ERR)/.test(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

function unavailable(): SignInFailure {
  return new SignInFailure(503, 'Identity provider unavailable', 'The identity provider does not answer; try again in a moment.');
}

/**
 * The key that seals flow cookies: derived from a secret every edge of a relay shares (the client
 * secret, else RELAY_STREAM_ID_KEY, else RELAY_ADMIN_TOKEN), or random for this process.
 */
function flowKeyOf(config: EdgeConfig, warnEphemeral: () => void): Uint8Array {
  const shared = config.RELAY_CONSOLE_OIDC_CLIENT_SECRET ?? config.RELAY_STREAM_ID_KEY ?? config.RELAY_ADMIN_TOKEN;
  if (shared === undefined) {
    if (config.RELAY_CONSOLE_OIDC_ISSUER !== undefined) warnEphemeral();
    return randomBytes(32);
  }
  return new Uint8Array(hkdfSync('sha256', shared, Buffer.alloc(0), FLOW_KEY_INFO, 32));
}
