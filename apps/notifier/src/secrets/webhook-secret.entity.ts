import { Check, Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** The Standard Webhooks signing secret of one agent, owned by the notifier. */
@Entity({ name: 'webhook_secrets' })
@Check('webhook_secrets_format', `"secret" ~ '^whsec_[A-Za-z0-9+/=]{32,}$'`)
export class WebhookSecretEntity {
  @PrimaryColumn({ type: 'varchar', length: 255, primaryKeyConstraintName: 'webhook_secrets_pkey' })
  handle: string;

  /** `whsec_` followed by the base64 key. */
  @Column({ type: 'text' })
  secret: string;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  rotatedAt: Date;
}
