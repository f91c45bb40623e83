import { createPrivateKey, X509Certificate } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { RelayError, type UpstreamTlsFields } from '@app/contracts';
import { SecretCipher, type SealedColumn } from '@app/secrets';
import type { ClientTls } from '../../outbound/guarded-fetch';

/** The client key is stored sealed (AES-256-GCM under RELAY_SECRET_KEYS), like the other upstream secrets. */
export const UPSTREAM_TLS_SEALED_COLUMNS: SealedColumn[] = [{ table: '"notifier"."upstream_tls"', keyColumns: ['handle'], column: 'client_key', kind: 'text' }];

function tlsProblem(field: string, message: string): RelayError {
  return new RelayError('invalid_params', `${field}: ${message}`, { field, fields: [{ field, messages: [message] }] });
}

/** The client certificate and key (and CA) checked: PEM that parses, a key that belongs to the certificate, a certificate in its validity. */
export function checkedTls(fields: UpstreamTlsFields, now = new Date()): { tls: ClientTls; certificate: X509Certificate } {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(fields.client_cert);
  } catch {
    throw tlsProblem('tls.client_cert', 'is not a PEM certificate');
  }
  let key;
  try {
    key = createPrivateKey(fields.client_key);
  } catch {
    throw tlsProblem('tls.client_key', 'is not an unencrypted PEM private key');
  }
  if (!certificate.checkPrivateKey(key)) throw tlsProblem('tls.client_key', 'is not the private key of tls.client_cert');
  if (new Date(certificate.validTo) <= now) throw tlsProblem('tls.client_cert', `expired on ${new Date(certificate.validTo).toISOString()}`);
  if (fields.ca !== undefined) {
    try {
      new X509Certificate(fields.ca);
    } catch {
      throw tlsProblem('tls.ca', 'is not a PEM certificate');
    }
  }
  return { tls: { cert: fields.client_cert, key: fields.client_key, ca: fields.ca ?? null }, certificate };
}

/** A client identity as stored: the key sealed. */
export interface SealedTls {
  client_cert: string;
  client_key: string;
  ca: string | null;
}

export interface UpstreamTlsInfo {
  client_cert_subject: string;
  client_cert_not_after: string;
  ca: boolean;
  updated_at: string;
}

/**
 * The mTLS client identity the relay presents to each upstream agent that has one: written by the
 * admin API, read for every request to that upstream (a replacement takes effect at the next
 * request, so a rotation needs no restart); the key is never returned or logged.
 */
@Injectable()
export class UpstreamTlsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
  ) {}

  async put(handle: string, fields: UpstreamTlsFields): Promise<void> {
    await this.store(this.dataSource.manager, handle, this.sealed(fields));
  }

  async remove(handle: string): Promise<void> {
    await this.store(this.dataSource.manager, handle, null);
  }

  /** A checked client identity with its key sealed, as a registration keeps it until the agent is created. */
  sealed(fields: UpstreamTlsFields): SealedTls {
    const { tls } = checkedTls(fields);
    return { client_cert: tls.cert, client_key: this.cipher.seal(tls.key), ca: tls.ca };
  }

  /** Makes `sealed` the agent's identity, or removes it (null); in the caller's transaction. */
  async store(manager: EntityManager, handle: string, sealed: SealedTls | null): Promise<void> {
    if (!sealed) {
      await manager.query(`DELETE FROM "notifier"."upstream_tls" WHERE "handle" = $1`, [handle]);
      return;
    }
    await manager.query(
      `INSERT INTO "notifier"."upstream_tls" ("handle", "client_cert", "client_key", "ca") VALUES ($1, $2, $3, $4)
       ON CONFLICT ("handle") DO UPDATE SET "client_cert" = EXCLUDED."client_cert", "client_key" = EXCLUDED."client_key", "ca" = EXCLUDED."ca", "updated_at" = now()`,
      [handle, sealed.client_cert, sealed.client_key, sealed.ca],
    );
  }

  async get(handle: string): Promise<ClientTls | null> {
    const rows = (await this.dataSource.query(`SELECT "client_cert", "client_key", "ca" FROM "notifier"."upstream_tls" WHERE "handle" = $1`, [
      handle,
    ])) as Array<{
      client_cert: string;
      client_key: string;
      ca: string | null;
    }>;
    const row = rows[0];
    return row ? { cert: row.client_cert, key: this.cipher.open(row.client_key), ca: row.ca } : null;
  }

  /** What the admin API shows of it: who the certificate names and until when, never the key. */
  async info(handle: string): Promise<UpstreamTlsInfo | null> {
    const rows = (await this.dataSource.query(
      `SELECT "client_cert", "ca" IS NOT NULL AS "ca", "updated_at" FROM "notifier"."upstream_tls" WHERE "handle" = $1`,
      [handle],
    )) as Array<{ client_cert: string; ca: boolean; updated_at: Date }>;
    const row = rows[0];
    if (!row) return null;
    const certificate = new X509Certificate(row.client_cert);
    return {
      client_cert_subject: certificate.subject.replace(/\n/g, ', '),
      client_cert_not_after: new Date(certificate.validTo).toISOString(),
      ca: row.ca,
      updated_at: new Date(row.updated_at).toISOString(),
    };
  }
}
