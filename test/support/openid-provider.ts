import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import type { Account, Token } from 'oidc-provider';

type ProviderClass = typeof import('oidc-provider').default;
let providerClass: ProviderClass | undefined;

/** oidc-provider, loaded once (its import warns that it prefers a newer Node.js than the one the project supports). */
async function loadProvider(): Promise<ProviderClass> {
  if (!providerClass) {
    const { warn } = console;
    console.warn = quiet(warn);
    try {
      providerClass = (await import('oidc-provider')).default;
    } finally {
      console.warn = warn;
    }
  }
  return providerClass;
}

/** A machine client of the provider that gets access tokens with the client-credentials grant. */
export interface ClientCredentialsClient {
  clientId: string;
  clientSecret: string;
  /** Extra claims in every access token issued to this client (e.g. `{ agentrelay_handle: 'alice' }`). */
  claims?: Record<string, unknown>;
  /** Lifetime of this client's access tokens; the provider's default otherwise. */
  tokenTtlSeconds?: number;
}

/** A person who can sign in through the provider's login form (the login name is the `sub`). */
export interface OpenIdAccount {
  sub: string;
  /** Claims of the ID token and userinfo, e.g. `{ email, name, groups }`. */
  claims?: Record<string, unknown>;
  /** Extra claims in the access tokens issued for this person. */
  accessTokenClaims?: Record<string, unknown>;
}

export interface OpenIdProviderOptions {
  /** The resource (audience) whose access tokens are JWTs when a client names no other. */
  audience?: string;
  clients?: ClientCredentialsClient[];
  /** Clients of the authorization-code flow, as oidc-provider client metadata (client_id, redirect_uris, ...). */
  webClients?: Record<string, unknown>[];
  accounts?: OpenIdAccount[];
  accessTokenTtlSeconds?: number;
  /** More scopes and the claims each releases, besides openid, email, profile and groups (e.g. `{ agentrelay: ['agentrelay_role'] }`). */
  scopeClaims?: Record<string, string[]>;
  /** The signing algorithm of the first key (and of each key added by rotateSigningKey). */
  algorithm?: 'RS256' | 'PS256' | 'ES256' | 'EdDSA';
}

export interface SigningKey {
  kid: string;
  alg: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

export const DEFAULT_TEST_AUDIENCE = 'https://relay.agentrelay.test';

/**
 * A real OpenID Provider (the certified `oidc-provider` package) on a loopback port of the test
 * process: its discovery document, JWKS, token endpoint (client credentials, with JWT access tokens
 * for a resource) and login form. Signing keys can be rotated and clients added while it runs, and
 * the provider can be stopped and started again on the same address to play an IdP outage.
 */
export class TestOpenIdProvider {
  readonly audience: string;
  private readonly clients = new Map<string, ClientCredentialsClient>();
  private readonly webClients: Record<string, unknown>[];
  private readonly accounts = new Map<string, OpenIdAccount>();
  private readonly requestCounts = new Map<string, number>();
  private readonly cookieKeys = [randomBytes(32).toString('base64url')];
  private keys: SigningKey[] = [];
  private server: Server | undefined;
  private port = 0;
  private handler: ((request: IncomingMessage, response: ServerResponse) => void) | undefined;

  private constructor(private readonly options: OpenIdProviderOptions) {
    this.audience = options.audience ?? DEFAULT_TEST_AUDIENCE;
    for (const client of options.clients ?? []) this.clients.set(client.clientId, client);
    this.webClients = options.webClients ?? [];
    for (const account of options.accounts ?? []) this.accounts.set(account.sub, account);
  }

  static async start(options: OpenIdProviderOptions = {}): Promise<TestOpenIdProvider> {
    const provider = new TestOpenIdProvider(options);
    await loadProvider();
    provider.keys = [await generateSigningKey(options.algorithm ?? 'RS256')];
    await provider.listen();
    provider.rebuild();
    return provider;
  }

  get issuer(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get tokenEndpoint(): string {
    return `${this.issuer}/token`;
  }

  get discoveryUrl(): string {
    return `${this.issuer}/.well-known/openid-configuration`;
  }

  get running(): boolean {
    return this.server !== undefined;
  }

  /** The key that signs new tokens (the first of the JWKS). */
  get currentKey(): SigningKey {
    return this.keys[0];
  }

  /** Every key the JWKS publishes, the signing one first. */
  get signingKeys(): readonly SigningKey[] {
    return this.keys;
  }

  /** How many requests reached a path (e.g. `/jwks`, `/.well-known/openid-configuration`). */
  requestCount(path: string): number {
    return this.requestCounts.get(path) ?? 0;
  }

  addClient(client: ClientCredentialsClient): void {
    this.clients.set(client.clientId, client);
    this.rebuild();
  }

  /** A client of the authorization-code flow, added while the provider runs (e.g. once the relay's redirect URL is known). */
  addWebClient(metadata: Record<string, unknown>): void {
    this.webClients.push(metadata);
    this.rebuild();
  }

  addAccount(account: OpenIdAccount): void {
    this.accounts.set(account.sub, account);
  }

  /** An access token from the real token endpoint with the client-credentials grant. */
  async clientCredentialsToken(clientId: string, options: { resource?: string; scope?: string } = {}): Promise<string> {
    const client = this.clients.get(clientId);
    if (!client) throw new Error(`no client ${clientId} at the test provider`);
    const body = new URLSearchParams({ grant_type: 'client_credentials', resource: options.resource ?? this.audience });
    if (options.scope) body.set('scope', options.scope);
    const basic = Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString('base64');
    const response = await fetch(this.tokenEndpoint, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    const answer = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
    if (!response.ok || !answer.access_token) {
      throw new Error(`token endpoint answered ${response.status}: ${answer.error} ${answer.error_description ?? ''}`);
    }
    return answer.access_token;
  }

  /**
   * A JWT signed with one of the provider's own keys (the current one unless `kid` names another),
   * for claims the token endpoint would not issue (expired, not yet valid, another audience ...).
   * `iss`, `aud`, `iat` and `exp` default to what the provider would put there.
   */
  async signJwt(claims: JWTPayload, options: { kid?: string; header?: Record<string, unknown> } = {}): Promise<string> {
    const key = options.kid ? this.keys.find((candidate) => candidate.kid === options.kid) : this.currentKey;
    if (!key) throw new Error(`no key ${options.kid} at the test provider`);
    const now = Math.floor(Date.now() / 1000);
    const payload: JWTPayload = { iss: this.issuer, aud: this.audience, iat: now, exp: now + 300, ...claims };
    return new SignJWT(payload)
      .setProtectedHeader({ typ: 'at+jwt', ...options.header, alg: key.alg, kid: key.kid })
      .sign(await importJWK(key.privateJwk, key.alg));
  }

  /**
   * A new signing key at the front of the JWKS: new tokens carry its `kid`. The previous keys stay
   * published unless `retirePrevious` is set.
   */
  async rotateSigningKey(options: { retirePrevious?: boolean } = {}): Promise<SigningKey> {
    const key = await generateSigningKey(this.options.algorithm ?? 'RS256');
    this.keys = options.retirePrevious ? [key] : [key, ...this.keys];
    this.rebuild();
    return key;
  }

  /** The IdP goes away: its port refuses connections until start(). */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  /** The IdP comes back on the same address. */
  async start(): Promise<void> {
    if (!this.server) await this.listen();
  }

  private async listen(): Promise<void> {
    const server = createServer((request, response) => {
      const path = (request.url ?? '/').split('?')[0];
      this.requestCounts.set(path, this.requestCount(path) + 1);
      if (!this.handler) {
        response.writeHead(503).end();
        return;
      }
      this.handler(request, response);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** oidc-provider takes its clients and keys when it is made: a change makes a new one on the same address. */
  private rebuild(): void {
    const current = this.currentKey;
    const Provider = providerClass!;
    const provider = withoutProviderNotices(
      () =>
        new Provider(this.issuer, {
          clients: [
            ...[...this.clients.values()].map((client) => ({
              client_id: client.clientId,
              client_secret: client.clientSecret,
              grant_types: ['client_credentials'],
              response_types: [],
              redirect_uris: [],
              token_endpoint_auth_method: 'client_secret_basic',
            })),
            ...this.webClients,
          ],
          jwks: { keys: this.keys.map((key) => key.privateJwk) },
          cookies: { keys: this.cookieKeys },
          claims: {
            openid: ['sub'],
            email: ['email', 'email_verified'],
            profile: ['name', 'preferred_username'],
            groups: ['groups'],
            ...this.options.scopeClaims,
          },
          findAccount: async (_context: unknown, sub: string): Promise<Account | undefined> => {
            const account = this.accounts.get(sub);
            if (!account) return undefined;
            return { accountId: sub, claims: () => ({ ...account.claims, sub }) };
          },
          features: {
            clientCredentials: { enabled: true },
            devInteractions: { enabled: true },
            resourceIndicators: {
              enabled: true,
              defaultResource: () => this.audience,
              useGrantedResource: () => true,
              getResourceServerInfo: () => ({
                scope: 'openid agent',
                accessTokenFormat: 'jwt',
                jwt: { sign: { alg: current.alg, kid: current.kid } },
              }),
            },
          },
          extraTokenClaims: (_context: unknown, token: Token) => {
            if (token.kind === 'ClientCredentials' && token.clientId) return this.clients.get(token.clientId)?.claims;
            if (token.accountId) return this.accounts.get(token.accountId)?.accessTokenClaims;
            return undefined;
          },
          ttl: {
            ClientCredentials: (_context: unknown, token: Token) =>
              (token.clientId && this.clients.get(token.clientId)?.tokenTtlSeconds) || this.options.accessTokenTtlSeconds || 600,
            AccessToken: () => this.options.accessTokenTtlSeconds ?? 600,
          },
        }),
    );
    this.handler = provider.callback();
  }
}

async function generateSigningKey(alg: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = randomBytes(8).toString('hex');
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' };
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateJwk, publicJwk };
}

/** oidc-provider warns on every start that its in-memory store and login form are for development: so they are, here. */
function withoutProviderNotices<T>(make: () => T): T {
  const { warn, info } = console;
  console.warn = quiet(warn);
  console.info = quiet(info);
  try {
    return make();
  } finally {
    console.warn = warn;
    console.info = info;
  }
}

function quiet(write: (...values: unknown[]) => void): (...values: unknown[]) => void {
  return (...values: unknown[]) => {
    if (!(typeof values[0] === 'string' && values[0].startsWith('oidc-provider '))) write(...values);
  };
}
