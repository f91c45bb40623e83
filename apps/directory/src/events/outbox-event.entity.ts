import { Check, Column, CreateDateColumn, Entity, Generated, Index, PrimaryColumn, Unique } from 'typeorm';

/** An event waiting for (or done with) its relay to JetStream; `id` is its `Nats-Msg-Id`. */
@Entity({ name: 'outbox_events' })
@Unique('outbox_events_position_key', ['position'])
@Index('outbox_events_unpublished_idx', ['position'], { where: '"published_at" IS NULL' })
@Check('outbox_events_subject_format', `"subject" ~ '^relay\\.events\\.[a-z_]+\\.[a-z_]+$'`)
@Check('outbox_events_payload_object', `jsonb_typeof("payload") = 'object'`)
export class OutboxEventEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'bigint', insert: false, update: false })
  @Generated('increment')
  position: string;

  @Column({ type: 'varchar', length: 255 })
  subject: string;

  @Column({ type: 'jsonb' })
  payload: Record<string, unknown>;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  publishedAt: Date | null;
}
