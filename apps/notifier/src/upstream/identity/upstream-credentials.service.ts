import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { UpstreamAuthFields, UpstreamAuthScheme, UpstreamInterface } from '@app/contracts';
import { SecretCipher, type SealedColumn } from '@app/secrets';
import { NotifierConfig } from '../../notifier.config';
import { UpstreamHealthService } from '../health/upstream-health.service';
import type { UpstreamOAuth2Client } from './upstream-credential.entity';
import { OAuth2TokenError, requestClientCredentialsToken, TOKEN_ANSWER_BYTES, type OAuth2Token } from './oauth2-token';

/** Stored sealed (AES-256-GCM under RELAY_SECRET_KEYS), like webhook secrets. */
export const UPSTREAM_CREDENTIAL_SEALED_COLUMNS: SealedColumn[] = [
  { table: '"notifier"."upstream_credentials"', keyColumns: ['handle'], column: 'secret', kind: 'text' },
];

/** The default header of an API key when neither the admin nor the card names one. */
export const DEFAULT_API_KEY_HEADER = 'X-API-Key';

/** A credential as a registration keeps it until the agent is created: the secret sealed. */
export interface SealedCredential {
  scheme: Exclude<UpstreamAuthScheme, 'none'>;
  header_name: string;
  secret: string;
  oauth2: UpstreamOAuth2Client | null;
}

export interface UpstreamCredential {
  scheme: Exclude<UpstreamAuthScheme, 'none'>;
  header_name: string;
  /** The API key, the bearer token, or the OAuth2 client secret. */
  secret: string;
  oauth2: UpstreamOAuth2Client | null;
}

/** A token kept until shortly before it expires: a tenth of its lifetime, at most 30 s, early. */
function refreshAt(token: OAuth2Token, now: number): number {
  const lifetimeMs = token.expires_in_s * 1000;
  return now + lifetimeMs - Math.min(30_000, lifetimeMs / 10);
}

/**
 * The credential the relay presents to each upstream agent: checked and sealed by the admin API's
 * registration (`relay.notifier.v1.upstream.resolve`), written when the directory creates the agent
 * (upstream_registrations.ts), read by the deliveries and the follower, never returned
 * or logged. Replacing it takes effect at the next request, so rotating it needs no restart.
 * OAuth2 client credentials become bearer tokens from the token URL, kept in memory per process
 * until shortly before they expire (one request at a time per client), and dropped when the
 * upstream answers 401.
 */
@Injectable()
export class UpstreamCredentialsService {
  private readonly tokens = new Map<string, { token: string; refreshAt: number }>();
  private readonly pending = new Map<string, Promise<string>>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
    @Inject(NotifierConfig) private readonly config: NotifierConfig,
    @Inject(UpstreamHealthService) private readonly health: UpstreamHealthService,
  ) {}

  /**
   * Checks a credential for a registration and seals it, writing nothing: OAuth2 client
   * credentials are tried first (a token is requested, and kept for the credential): credentials
   * the token URL refuses are thrown as an `OAuth2TokenError`. `store` writes what this returns.
   */
  async prepare(
    handle: string,
    auth: UpstreamAuthFields | undefined,
    card: { api_key_header: string | null; oauth2_token_url: string | null },
    timeoutMs = this.config.RELAY_WEBHOOK_TIMEOUT_MS,
  ): Promise<{ scheme: UpstreamAuthScheme; header: string | null; sealed: SealedCredential | null }> {
    if (!auth) return { scheme: 'none', header: null, sealed: null };
    let oauth2: UpstreamOAuth2Client | null = null;
    if (auth.scheme === 'oauth2') {
      const tokenUrl = auth.token_url ?? card.oauth2_token_url;
      if (!tokenUrl) throw new OAuth2TokenError('auth.token_url', 'the card names no OAuth2 client-credentials token URL: give auth.token_url');
      oauth2 = { token_url: tokenUrl, client_id: auth.client_id as string, scope: auth.scope ?? null, resource: auth.resource ?? null };
      const first = await requestClientCredentialsToken(oauth2, auth.secret, this.tokenFetch(handle, timeoutMs));
      // Keyed by the credential: used only once it is the agent's stored one.
      this.tokens.set(this.tokenKey(handle, oauth2, auth.secret), { token: first.access_token, refreshAt: refreshAt(first, Date.now()) });
    }
    const header = auth.scheme === 'api_key' ? (auth.header_name ?? card.api_key_header ?? DEFAULT_API_KEY_HEADER) : 'Authorization';
    return { scheme: auth.scheme, header, sealed: { scheme: auth.scheme, header_name: header, secret: this.cipher.seal(auth.secret), oauth2 } };
  }

  /** Keeps a prepared credential as the agent's, or removes any held for the handle when there is none; in the caller's transaction. */
  async store(manager: EntityManager, handle: string, sealed: SealedCredential | null): Promise<void> {
    if (!sealed) {
      await manager.query(`DELETE FROM "notifier"."upstream_credentials" WHERE "handle" = $1`, [handle]);
      return;
    }
    await manager.query(
      `INSERT INTO "notifier"."upstream_credentials" ("handle", "scheme", "header_name", "secret", "oauth2") VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT ("handle") DO UPDATE SET "scheme" = EXCLUDED."scheme", "header_name" = EXCLUDED."header_name", "secret" = EXCLUDED."secret",
         "oauth2" = EXCLUDED."oauth2", "updated_at" = now()`,
      [handle, sealed.scheme, sealed.header_name, sealed.secret, sealed.oauth2 ? JSON.stringify(sealed.oauth2) : null],
    );
  }

  async get(handle: string): Promise<UpstreamCredential | null> {
    const rows = (await this.dataSource.query(`SELECT "scheme", "header_name", "secret", "oauth2" FROM "notifier"."upstream_credentials" WHERE "handle" = $1`, [
      handle,
    ])) as Array<{ scheme: UpstreamCredential['scheme']; header_name: string; secret: string; oauth2: UpstreamOAuth2Client | null }>;
    const row = rows[0];
    return row ? { scheme: row.scheme, header_name: row.header_name, secret: this.cipher.open(row.secret), oauth2: row.oauth2 } : null;
  }

  /**
   * What puts the agent's credential on each request to its server: its header (and value), an
   * OAuth2 token fetched when none is kept. Read once for a client the notifier keeps (and read
   * again when the credential, the client identity or the accepted card change); none is made to
   * an interface other than the card the notifier accepted (its own record, which no NATS user writes).
   */
  async authFor(handle: string, upstream: UpstreamInterface): Promise<() => Promise<Record<string, string>>> {
    const [accepted] = (await this.dataSource.query(`SELECT "accepted"->>'url' AS "url" FROM "notifier"."upstream_agents" WHERE "handle" = $1`, [
      handle,
    ])) as Array<{ url: string | null }>;
    if (accepted?.url && accepted.url !== upstream.url) {
      throw new Error(`${handle}'s interface ${upstream.url} is not the card the notifier accepted (${accepted.url}): nothing is sent there`);
    }
    const credential = await this.get(handle);
    if (!credential) return async () => ({});
    if (credential.scheme === 'bearer') {
      const headers = { Authorization: `Bearer ${credential.secret}` };
      return async () => headers;
    }
    if (credential.scheme === 'api_key') {
      const headers = { [credential.header_name]: credential.secret };
      return async () => headers;
    }
    return async () => ({ Authorization: `Bearer ${await this.token(handle, credential)}` });
  }

  /** The upstream refused a token (401): the next request gets a new one. */
  forget(handle: string): void {
    for (const key of this.tokens.keys()) if (key.startsWith(`${handle}\n`)) this.tokens.delete(key);
  }

  private async token(handle: string, credential: UpstreamCredential): Promise<string> {
    const client = credential.oauth2 as UpstreamOAuth2Client;
    const key = this.tokenKey(handle, client, credential.secret);
    const kept = this.tokens.get(key);
    if (kept && kept.refreshAt > Date.now()) return kept.token;
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    const request = requestClientCredentialsToken(client, credential.secret, this.tokenFetch(handle, this.config.RELAY_WEBHOOK_TIMEOUT_MS))
      .then((token) => {
        this.forget(handle);
        this.tokens.set(key, { token: token.access_token, refreshAt: refreshAt(token, Date.now()) });
        return token.access_token;
      })
      .finally(() => this.pending.delete(key));
    this.pending.set(key, request);
    return request;
  }

  /** Keyed by the client as stored: a credential rotated through another replica is a new key. */
  private tokenKey(handle: string, client: UpstreamOAuth2Client, secret: string): string {
    const { token_url, client_id, scope, resource } = client;
    return `${handle}\n${createHash('sha256')
      .update(JSON.stringify([token_url, client_id, scope, resource, secret]))
      .digest('base64url')}`;
  }

  /** Token requests go through the SSRF guard and are counted with the agent's calls; the token URL gets no client certificate. */
  private tokenFetch(handle: string, timeoutMs: number): typeof fetch {
    return this.health.fetchFor(handle, timeoutMs, { method: 'OAuth2Token', tls: null, maxAnswerBytes: TOKEN_ANSWER_BYTES });
  }
}
