import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import type { DeliveryEntity } from './delivery.entity';

/**
 * One HTTP attempt of a delivery, recorded before its request is sent; then its status code or
 * error and how long it took (all null: in flight, or its process stopped before the outcome).
 */
@Entity({ name: 'delivery_attempts' })
@Check('delivery_attempts_no', `"attempt_no" >= 1`)
@Index('delivery_attempts_delivery_idx', ['deliveryId', 'attemptNo'])
export class DeliveryAttemptEntity {
  /** bigserial: a bigint, read as a string. */
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'delivery_attempts_pkey' })
  id: string;

  @Column({ type: 'uuid' })
  deliveryId: string;

  @ManyToOne('DeliveryEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'delivery_id', foreignKeyConstraintName: 'delivery_attempts_delivery_fkey' })
  delivery?: Relation<DeliveryEntity>;

  @Column({ type: 'integer' })
  attemptNo: number;

  @Column({ type: 'integer', nullable: true })
  statusCode: number | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  /** Null until the attempt's outcome is recorded (it is recorded before its request is sent). */
  @Column({ type: 'integer', nullable: true })
  durationMs: number | null;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  attemptedAt: Date;
}
