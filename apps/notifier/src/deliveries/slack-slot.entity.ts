import { Column, Entity, PrimaryColumn } from 'typeorm';

/** When a Slack incoming webhook may be posted to next, shared by every notifier replica. */
@Entity({ name: 'slack_slots' })
export class SlackSlotEntity {
  /** Lowercase hex SHA-256 of the webhook URL. */
  @PrimaryColumn({ type: 'char', length: 64, primaryKeyConstraintName: 'slack_slots_pkey' })
  urlHash: string;

  @Column({ type: 'timestamptz' })
  nextAt: Date;
}
