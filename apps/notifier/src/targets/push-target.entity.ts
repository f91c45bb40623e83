import { Check, Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import { AGENT_LIMITS, PUSH_CONFIG_LIMITS, TASK_LIMITS, type WireVersion } from '@app/contracts';

/** The notifier's copy of one A2A push-notification config of a task (ids are per owner), kept from the tasks service's events. */
@Entity({ name: 'push_targets' })
@Check('push_targets_version', `"version" IN ('0.3', '1.0')`)
export class PushTargetEntity {
  @PrimaryColumn({ type: 'varchar', length: TASK_LIMITS.taskIdChars, primaryKeyConstraintName: 'push_targets_pkey' })
  taskId: string;

  @PrimaryColumn({ type: 'varchar', length: PUSH_CONFIG_LIMITS.configIdChars, primaryKeyConstraintName: 'push_targets_pkey' })
  configId: string;

  @PrimaryColumn({ type: 'varchar', length: AGENT_LIMITS.handleChars, primaryKeyConstraintName: 'push_targets_pkey' })
  ownerHandle: string;

  @Column({ type: 'varchar', length: 8 })
  version: WireVersion;

  @Column({ type: 'varchar', length: PUSH_CONFIG_LIMITS.urlChars })
  url: string;

  @Column({ type: 'varchar', length: PUSH_CONFIG_LIMITS.tokenChars, nullable: true })
  token: string | null;

  @Column({ type: 'varchar', length: PUSH_CONFIG_LIMITS.schemeChars, nullable: true })
  authScheme: string | null;

  @Column({ type: 'varchar', length: PUSH_CONFIG_LIMITS.credentialsChars, nullable: true })
  authCredentials: string | null;

  @Column({ type: 'timestamptz' })
  occurredAt: Date;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
