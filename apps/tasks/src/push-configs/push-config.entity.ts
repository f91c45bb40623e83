import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, UpdateDateColumn, type Relation } from 'typeorm';
import { AGENT_LIMITS, PUSH_CONFIG_LIMITS } from '@app/contracts';
import type { TaskEntity } from '../tasks/store/task.entity';

/** An A2A push-notification config of a task, owned by the agent that set it; ids are per owner. */
@Entity({ name: 'push_configs' })
@Index('push_configs_task_created_idx', ['taskId', 'createdAt'])
@Index('push_configs_owner_idx', ['ownerId'])
@Check('push_configs_version', `"version" IN ('0.3', '1.0')`)
@Check('push_configs_url_http', `"url" ~ '^https?://'`)
@Check('push_configs_auth_schemes', `"auth_schemes" IS NULL OR cardinality("auth_schemes") >= 1`)
@Check('push_configs_credentials_need_scheme', `"auth_credentials" IS NULL OR "auth_schemes" IS NOT NULL`)
export class PushConfigEntity {
  @PrimaryColumn({ type: 'char', length: 26, primaryKeyConstraintName: 'push_configs_pkey' })
  taskId: string;

  @ManyToOne('TaskEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'task_id', foreignKeyConstraintName: 'push_configs_task_fkey' })
  task?: Relation<TaskEntity>;

  @PrimaryColumn({ type: 'varchar', length: PUSH_CONFIG_LIMITS.configIdChars, primaryKeyConstraintName: 'push_configs_pkey' })
  id: string;

  @PrimaryColumn({ type: 'varchar', length: AGENT_LIMITS.idChars, primaryKeyConstraintName: 'push_configs_pkey' })
  ownerId: string;

  @Column({ type: 'varchar', length: AGENT_LIMITS.handleChars })
  ownerHandle: string;

  /** A2A dialect the config was set in: '0.3' or '1.0'. */
  @Column({ type: 'varchar', length: 8 })
  version: string;

  @Column({ type: 'varchar', length: PUSH_CONFIG_LIMITS.urlChars })
  url: string;

  @Column({ type: 'varchar', length: PUSH_CONFIG_LIMITS.tokenChars, nullable: true })
  token: string | null;

  @Column({ type: 'text', array: true, nullable: true })
  authSchemes: string[] | null;

  @Column({ type: 'varchar', length: PUSH_CONFIG_LIMITS.credentialsChars, nullable: true })
  authCredentials: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
