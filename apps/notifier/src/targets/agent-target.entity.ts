import { Check, Column, Entity, PrimaryColumn, Unique } from 'typeorm';
import type { UpstreamInterface } from '@app/contracts';

/** The notifier's copy of an agent's delivery targets, kept from the directory's agent events. */
@Entity({ name: 'agent_targets' })
@Unique('agent_targets_handle_key', ['handle'])
@Check('agent_targets_webhook_timeout', `"webhook_timeout_ms" IS NULL OR "webhook_timeout_ms" BETWEEN 1000 AND 30000`)
export class AgentTargetEntity {
  @PrimaryColumn({ type: 'varchar', length: 64, primaryKeyConstraintName: 'agent_targets_pkey' })
  agentId: string;

  @Column({ type: 'varchar', length: 255 })
  handle: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ type: 'varchar', length: 2048, nullable: true })
  notificationWebhookUrl: string | null;

  @Column({ type: 'varchar', length: 2048, nullable: true })
  slackWebhookUrl: string | null;

  /** The agent's own timeout for requests to its webhook and push configs; null: RELAY_WEBHOOK_TIMEOUT_MS. */
  @Column({ type: 'integer', nullable: true })
  webhookTimeoutMs: number | null;

  /** The agent's own A2A server, for an upstream agent (its handoffs are delivered there). */
  @Column({ type: 'jsonb', nullable: true })
  upstream: UpstreamInterface | null;

  @Column({ type: 'boolean', default: false })
  disabled: boolean;

  /** The directory event this row was last written from. */
  @Column({ type: 'uuid' })
  sourceEventId: string;

  /** When that event happened; an older event never overwrites a newer one. */
  @Column({ type: 'timestamptz' })
  occurredAt: Date;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}
