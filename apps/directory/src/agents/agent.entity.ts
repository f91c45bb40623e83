import { Check, Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { AGENT_LIMITS, type UpstreamInterface } from '@app/contracts';

@Entity({ name: 'agents' })
@Check('agents_handle_format', `"handle" ~ '^[a-z0-9][a-z0-9._-]{0,127}@[a-z0-9][a-z0-9.-]{0,126}$'`)
@Check('agents_name_not_blank', `btrim("name") <> ''`)
@Check('agents_metadata_object', `jsonb_typeof("metadata") = 'object'`)
@Check('agents_webhook_url_http', `"notification_webhook_url" IS NULL OR "notification_webhook_url" ~ '^https?://'`)
@Check('agents_slack_url_http', `"slack_webhook_url" IS NULL OR "slack_webhook_url" ~ '^https?://'`)
@Check('agents_token_subject_pair', `("token_issuer" IS NULL) = ("token_subject" IS NULL)`)
@Check('agents_owner_pair', `("owner_issuer" IS NULL) = ("owner_subject" IS NULL)`)
@Check('agents_email_verified_has_email', `NOT "email_verified" OR "email" IS NOT NULL`)
@Check('agents_upstream_object', `"upstream" IS NULL OR jsonb_typeof("upstream") = 'object'`)
@Check('agents_webhook_timeout', `"webhook_timeout_ms" IS NULL OR "webhook_timeout_ms" BETWEEN 1000 AND 30000`)
@Index('agents_token_subject', ['tokenIssuer', 'tokenSubject'], { unique: true, where: '"token_issuer" IS NOT NULL' })
export class AgentEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'varchar', length: AGENT_LIMITS.handleChars, unique: true })
  handle: string;

  @Column({ type: 'varchar', length: AGENT_LIMITS.nameChars })
  name: string;

  @Column({ type: 'varchar', length: AGENT_LIMITS.roleChars, nullable: true })
  role: string | null;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  skills: string[];

  @Column({ type: 'jsonb', default: () => "'{}'" })
  metadata: Record<string, unknown>;

  /** The media types the agent accepts in the parts sent to it (its card's `defaultInputModes`); null: the relay's default. */
  @Column({ type: 'text', array: true, nullable: true })
  inputModes: string[] | null;

  @Column({ type: 'varchar', length: AGENT_LIMITS.emailChars, nullable: true })
  email: string | null;

  /** Whether the provider verified `email` as the owner's, at the owner's own sign-in. */
  @Column({ type: 'boolean', default: false })
  emailVerified: boolean;

  /** The owner's account at the console's OpenID Provider (issuer and `sub`); null: none on record. */
  @Column({ type: 'varchar', length: AGENT_LIMITS.tokenIssuerChars, nullable: true })
  ownerIssuer: string | null;

  @Column({ type: 'varchar', length: AGENT_LIMITS.tokenSubjectChars, nullable: true })
  ownerSubject: string | null;

  @Column({ type: 'varchar', length: AGENT_LIMITS.webhookUrlChars, nullable: true })
  notificationWebhookUrl: string | null;

  @Column({ type: 'varchar', length: AGENT_LIMITS.webhookUrlChars, nullable: true })
  slackWebhookUrl: string | null;

  /** The timeout of each request to the agent's webhook and push configs; null: the notifier's default. */
  @Column({ type: 'integer', nullable: true })
  webhookTimeoutMs: number | null;

  /** For an agent that runs its own A2A server: the interface read from its card, where the notifier delivers its handoffs. */
  @Column({ type: 'jsonb', nullable: true })
  upstream: UpstreamInterface | null;

  /** The IdP issuer and token `sub` that authenticate as this agent whatever the token's handle claim (null: none). */
  @Column({ type: 'varchar', length: AGENT_LIMITS.tokenIssuerChars, nullable: true })
  tokenIssuer: string | null;

  @Column({ type: 'varchar', length: AGENT_LIMITS.tokenSubjectChars, nullable: true })
  tokenSubject: string | null;

  @Column({ type: 'timestamptz', nullable: true })
  disabledAt: Date | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
