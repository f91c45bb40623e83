import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row: the highest outbox position the retention has deleted. Every event after it is still in
 * the outbox, so a stream may resume after any position from it on (docs/events.md#retention).
 */
@Entity({ name: 'outbox_horizon' })
export class OutboxHorizonEntity {
  @PrimaryColumn({ type: 'smallint', primaryKeyConstraintName: 'outbox_horizon_pkey' })
  id: number;

  /** bigint; pg returns int8 as a string. */
  @Column({ type: 'bigint', default: 0 })
  deletedThrough: string;
}
