import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique, UpdateDateColumn, type Relation } from 'typeorm';
import { TASK_LIMITS, type ArtifactView, type PartView } from '@app/contracts';
import type { TaskEntity } from './task.entity';

/** An artifact of a task: typed (`type` + `fields`) or free-form A2A parts, in attachment order. */
@Entity({ name: 'artifacts' })
// A GIN index over an expression (migration ConsoleReads), which TypeORM does not describe: it leaves it alone.
@Index('artifacts_name_search_idx', { synchronize: false })
@Unique('artifacts_task_position_key', ['taskId', 'position'])
@Check('artifacts_type_known', `"type" IS NULL OR "type" IN ('file_diff', 'file_ref', 'test_command', 'api_contract', 'link')`)
@Check('artifacts_typed_or_parts', `"type" IS NOT NULL OR jsonb_array_length("parts") >= 1`)
@Check('artifacts_fields_object', `jsonb_typeof("fields") = 'object'`)
@Check('artifacts_parts_array', `jsonb_typeof("parts") = 'array'`)
@Check('artifacts_metadata_object', `jsonb_typeof("metadata") = 'object'`)
export class ArtifactEntity {
  @PrimaryColumn({ type: 'char', length: 26, primaryKeyConstraintName: 'artifacts_pkey' })
  taskId: string;

  @ManyToOne('TaskEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'task_id', foreignKeyConstraintName: 'artifacts_task_fkey' })
  task?: Relation<TaskEntity>;

  @PrimaryColumn({ type: 'varchar', length: TASK_LIMITS.artifactIdChars, primaryKeyConstraintName: 'artifacts_pkey' })
  artifactId: string;

  @Column({ type: 'integer' })
  position: number;

  @Column({ type: 'varchar', length: 20, nullable: true })
  type: ArtifactView['type'] | null;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  fields: Record<string, unknown>;

  @Column({ type: 'varchar', length: TASK_LIMITS.artifactNameChars, nullable: true })
  name: string | null;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'jsonb', default: () => "'[]'" })
  parts: PartView[];

  @Column({ type: 'jsonb', default: () => "'{}'" })
  metadata: Record<string, unknown>;

  @Column({ type: 'boolean', default: true })
  lastChunk: boolean;

  /** Bytes of the content as JSON (what a reply carries), written with it. */
  @Column({ type: 'integer', default: 0 })
  sizeBytes: number;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
