import { Check, Column, Entity, PrimaryColumn } from 'typeorm';
import type { UpstreamAuthScheme } from '@app/contracts';

/** The credential the relay presents to one upstream agent's A2A server, owned by the notifier. */
@Entity({ name: 'upstream_credentials' })
@Check('upstream_credentials_scheme', `"scheme" IN ('api_key', 'bearer')`)
export class UpstreamCredentialEntity {
  @PrimaryColumn({ type: 'varchar', length: 255, primaryKeyConstraintName: 'upstream_credentials_pkey' })
  handle: string;

  @Column({ type: 'varchar', length: 16 })
  scheme: Exclude<UpstreamAuthScheme, 'none'>;

  /** The header it goes in: the API key's header, or `Authorization` for a bearer token. */
  @Column({ type: 'varchar', length: 128 })
  headerName: string;

  /** The API key or token, sealed (`v1:<key id>:…`) under RELAY_SECRET_KEYS; never returned. */
  @Column({ type: 'text' })
  secret: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}
