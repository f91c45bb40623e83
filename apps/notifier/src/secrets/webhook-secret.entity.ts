import { Check, Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** The Standard Webhooks signing secret of one agent, owned by the notifier. */
@Entity({ name: 'webhook_secrets' })
@Check('webhook_secrets_format', `"secret" ~ '^(whsec_[A-Za-z0-9+/=]{32,}|v1:[A-Za-z0-9_-]{1,32}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22,})$'`)
export class WebhookSecretEntity {
  @PrimaryColumn({ type: 'varchar', length: 255, primaryKeyConstraintName: 'webhook_secrets_pkey' })
  handle: string;

  /** `whsec_` followed by the base64 key, sealed (`v1:<key id>:…`); clear only in rows older than sealing. */
  @Column({ type: 'text' })
  secret: string;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  rotatedAt: Date;
}
