import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** An event waiting for (or done with) its relay to JetStream; `id` is its `Nats-Msg-Id`. */
@Entity({ name: 'outbox_events' })
export class OutboxEventEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'bigint', insert: false, update: false })
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
