import { Check, Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { WireVersion } from '@app/contracts';

/** The notifier's copy of one A2A push-notification config of a task (ids are per owner), kept from the tasks service's events. */
@Entity({ name: 'push_targets' })
@Check('push_targets_version', `"version" IN ('0.3', '1.0')`)
export class PushTargetEntity {
  @PrimaryColumn({ type: 'varchar', length: 64, primaryKeyConstraintName: 'push_targets_pkey' })
  taskId: string;

  @PrimaryColumn({ type: 'varchar', length: 255, primaryKeyConstraintName: 'push_targets_pkey' })
  configId: string;

  @PrimaryColumn({ type: 'varchar', length: 255, primaryKeyConstraintName: 'push_targets_pkey' })
  ownerHandle: string;

  @Column({ type: 'varchar', length: 8 })
  version: WireVersion;

  @Column({ type: 'varchar', length: 2048 })
  url: string;

  @Column({ type: 'varchar', length: 4096, nullable: true })
  token: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  authScheme: string | null;

  @Column({ type: 'varchar', length: 4096, nullable: true })
  authCredentials: string | null;

  @Column({ type: 'timestamptz' })
  occurredAt: Date;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
