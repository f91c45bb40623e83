import { Check, Column, Entity, PrimaryColumn } from 'typeorm';
import type { UpstreamAuthScheme } from '@app/contracts';

/** An OAuth2 client of the client-credentials grant, as the relay keeps it for one upstream agent. */
export interface UpstreamOAuth2Client {
  token_url: string;
  client_id: string;
  scope: string | null;
  resource: string | null;
}

/** The credential the relay presents to one upstream agent's A2A server, owned by the notifier. */
@Entity({ name: 'upstream_credentials' })
@Check('upstream_credentials_scheme', `"scheme" IN ('api_key', 'bearer', 'oauth2')`)
@Check('upstream_credentials_oauth2', `("scheme" = 'oauth2') = ("oauth2" IS NOT NULL)`)
export class UpstreamCredentialEntity {
  @PrimaryColumn({ type: 'varchar', length: 255, primaryKeyConstraintName: 'upstream_credentials_pkey' })
  handle: string;

  @Column({ type: 'varchar', length: 16 })
  scheme: Exclude<UpstreamAuthScheme, 'none'>;

  /** The header it goes in: the API key's header, or `Authorization` for a bearer token. */
  @Column({ type: 'varchar', length: 128 })
  headerName: string;

  /** `oauth2`: the client and where its tokens come from (the client secret is `secret`). */
  @Column({ type: 'jsonb', nullable: true })
  oauth2: UpstreamOAuth2Client | null;

  /** The API key, token or OAuth2 client secret, sealed (`v1:<key id>:…`) under RELAY_SECRET_KEYS; never returned. */
  @Column({ type: 'text' })
  secret: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}
