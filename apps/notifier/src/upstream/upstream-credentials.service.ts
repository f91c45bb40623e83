import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { UpstreamAuthFields, UpstreamAuthScheme } from '@app/contracts';
import { SecretCipher, type SealedColumn } from '@app/secrets';

/** Stored sealed (AES-256-GCM under RELAY_SECRET_KEYS), like webhook secrets. */
export const UPSTREAM_CREDENTIAL_SEALED_COLUMNS: SealedColumn[] = [
  { table: '"notifier"."upstream_credentials"', keyColumns: ['handle'], column: 'secret', kind: 'text' },
];

/** The default header of an API key when neither the admin nor the card names one. */
export const DEFAULT_API_KEY_HEADER = 'X-API-Key';

export interface UpstreamCredential {
  scheme: Exclude<UpstreamAuthScheme, 'none'>;
  header_name: string;
  secret: string;
}

/** The header (and its value) a credential puts on each request to the upstream. */
export function credentialHeaders(credential: UpstreamCredential | null): Record<string, string> {
  if (!credential) return {};
  return credential.scheme === 'bearer' ? { Authorization: `Bearer ${credential.secret}` } : { [credential.header_name]: credential.secret };
}

/**
 * The credential the relay presents to each upstream agent: written by the admin API (through
 * `relay.notifier.v1.upstream.resolve`), read by the deliveries and the follower, never returned
 * or logged. Replacing it takes effect at the next request, so rotating it needs no restart.
 */
@Injectable()
export class UpstreamCredentialsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
  ) {}

  /** Keeps the credential (sealed), or removes any held for the handle when there is none. */
  async put(handle: string, auth: UpstreamAuthFields | undefined, cardHeader: string | null): Promise<{ scheme: UpstreamAuthScheme; header: string | null }> {
    if (!auth) {
      await this.dataSource.query(`DELETE FROM "notifier"."upstream_credentials" WHERE "handle" = $1`, [handle]);
      return { scheme: 'none', header: null };
    }
    const header = auth.scheme === 'bearer' ? 'Authorization' : (auth.header_name ?? cardHeader ?? DEFAULT_API_KEY_HEADER);
    await this.dataSource.query(
      `INSERT INTO "notifier"."upstream_credentials" ("handle", "scheme", "header_name", "secret") VALUES ($1, $2, $3, $4)
       ON CONFLICT ("handle") DO UPDATE SET "scheme" = EXCLUDED."scheme", "header_name" = EXCLUDED."header_name", "secret" = EXCLUDED."secret", "updated_at" = now()`,
      [handle, auth.scheme, header, this.cipher.seal(auth.secret)],
    );
    return { scheme: auth.scheme, header };
  }

  async get(handle: string): Promise<UpstreamCredential | null> {
    const rows = (await this.dataSource.query(`SELECT "scheme", "header_name", "secret" FROM "notifier"."upstream_credentials" WHERE "handle" = $1`, [
      handle,
    ])) as Array<{ scheme: UpstreamCredential['scheme']; header_name: string; secret: string }>;
    const row = rows[0];
    return row ? { scheme: row.scheme, header_name: row.header_name, secret: this.cipher.open(row.secret) } : null;
  }
}
