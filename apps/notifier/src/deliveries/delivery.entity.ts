import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn, Unique } from 'typeorm';
import type { DeliveryChannel, DeliveryStatus } from '@app/contracts';
import type { DeliveryAssertionFacts } from './delivery-assertion';

/** One event to one target (webhook, Slack, A2A push or an upstream agent's A2A server), with its retry schedule and outcome. */
@Entity({ name: 'deliveries' })
@Unique('deliveries_event_target_key', ['eventId', 'channel', 'targetHandle', 'targetRef'])
@Check('deliveries_channel', `"channel" IN ('webhook', 'slack', 'push', 'upstream')`)
@Check('deliveries_status', `"status" IN ('pending', 'failed', 'succeeded', 'dead')`)
@Check('deliveries_attempts', `"attempts" >= 0 AND "round_attempts" >= 0 AND "round_attempts" <= "attempts"`)
@Check('deliveries_schedule', `("status" IN ('pending', 'failed')) = ("next_attempt_at" IS NOT NULL)`)
@Check('deliveries_timeout', `"timeout_ms" IS NULL OR "timeout_ms" BETWEEN 1000 AND 30000`)
@Check('deliveries_delivered', `("status" = 'succeeded') = ("delivered_at" IS NOT NULL)`)
// The migration orders this index by "created_at" DESC, which an entity index cannot say.
@Index('deliveries_status_created_idx', ['status', 'createdAt'])
@Index('deliveries_task_idx', ['taskId'])
export class DeliveryEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'deliveries_pkey' })
  id: string;

  @Column({ type: 'uuid' })
  eventId: string;

  @Column({ type: 'varchar', length: 255 })
  taskId: string;

  @Column({ type: 'varchar', length: 64 })
  event: string;

  @Column({ type: 'varchar', length: 16 })
  channel: DeliveryChannel;

  @Column({ type: 'varchar', length: 255 })
  targetHandle: string;

  /** The handle for webhook and Slack deliveries, `push:<config id>` for push deliveries. */
  @Column({ type: 'varchar', length: 300 })
  targetRef: string;

  @Column({ type: 'varchar', length: 2048 })
  url: string;

  /** The URL's host and port: deliveries share slots and a circuit breaker per destination. */
  @Column({ type: 'varchar', length: 300 })
  destination: string;

  /** The request timeout the owner agent chose (`webhook_timeout_ms`); null: RELAY_WEBHOOK_TIMEOUT_MS. */
  @Column({ type: 'integer', nullable: true })
  timeoutMs: number | null;

  @Column({ type: 'varchar', length: 100 })
  contentType: string;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  headers: Record<string, string>;

  @Column({ type: 'jsonb' })
  body: unknown;

  /** What each attempt's signed assertion states beside its times (docs/chains.md#who-asked-signed); null on Slack deliveries and those recorded before. */
  @Column({ type: 'jsonb', nullable: true })
  assertion: DeliveryAssertionFacts | null;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status: DeliveryStatus;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  /** Attempts since the delivery was last queued again by hand. */
  @Column({ type: 'integer', default: 0 })
  roundAttempts: number;

  @Index('deliveries_due_idx', { where: `"status" IN ('pending', 'failed')` })
  @Column({ type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  lockedUntil: Date | null;

  @Column({ type: 'integer', nullable: true })
  lastStatusCode: number | null;

  @Column({ type: 'text', nullable: true })
  lastError: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  deliveredAt: Date | null;
}
