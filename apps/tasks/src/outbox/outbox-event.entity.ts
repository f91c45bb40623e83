import { Check, Column, CreateDateColumn, Entity, Generated, Index, PrimaryColumn, Unique } from 'typeorm';

const TASK_EVENT_TYPES = `'held', 'created', 'message_appended', 'artifact_updated', 'accepted', 'input_required', 'completed', 'failed', 'rejected', 'canceled'`;

/**
 * An event written in the same transaction as the change it reports, published to NATS by the
 * outbox relay in `position` order.
 */
@Entity({ name: 'outbox_events' })
@Unique('outbox_events_position_key', ['position'])
@Index('outbox_events_unpublished_idx', ['position'], { where: '"published_at" IS NULL' })
@Index('outbox_events_task_position_idx', ['taskId', 'position'])
@Index('outbox_events_task_unpublished_idx', ['taskId', 'position'], { where: '"published_at" IS NULL' })
@Index('outbox_events_sender_position_idx', { synchronize: false })
@Index('outbox_events_recipient_position_idx', { synchronize: false })
@Check('outbox_events_type_known', `"type" IN (${TASK_EVENT_TYPES}, 'push_config_set', 'push_config_deleted')`)
@Check(
  'outbox_events_subject_matches_type',
  `("type" IN (${TASK_EVENT_TYPES}) AND "subject" = 'relay.events.task.' || "type")
        OR ("type" = 'push_config_set' AND "subject" = 'relay.events.push_config.set')
        OR ("type" = 'push_config_deleted' AND "subject" = 'relay.events.push_config.deleted')`,
)
export class OutboxEventEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'outbox_events_pkey' })
  id: string;

  /** bigserial; pg returns int8 as a string. */
  @Column({ type: 'bigint' })
  @Generated('increment')
  position: string;

  @Column({ type: 'text' })
  subject: string;

  @Column({ type: 'text' })
  type: string;

  @Column({ type: 'text' })
  taskId: string;

  /** The event as published (a task event or a push-config event). */
  @Column({ type: 'jsonb' })
  payload: object;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  publishedAt: Date | null;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ type: 'text', nullable: true })
  lastError: string | null;

  /** The `traceparent` of the traced request that wrote the event, sent with it when it is published. */
  @Column({ type: 'text', nullable: true })
  traceParent: string | null;
}
