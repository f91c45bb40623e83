import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique, type Relation } from 'typeorm';
import { AGENT_LIMITS, TASK_LIMITS, type PartView } from '@app/contracts';
import type { TaskEntity } from './task.entity';

/** A message of a task, numbered from 1 per task; `id` is the client's message id. */
@Entity({ name: 'messages' })
// A GIN index over an expression (migration BoundedSearch), which TypeORM does not describe: it leaves it alone.
@Index('messages_text_search_idx', { synchronize: false })
@Unique('messages_task_id_id_key', ['taskId', 'id'])
@Check('messages_sequence_range', `"sequence_no" BETWEEN 1 AND ${TASK_LIMITS.messagesPerTask}`)
@Check('messages_id_length', `char_length("id") BETWEEN 1 AND ${TASK_LIMITS.messageIdChars}`)
@Check('messages_author_known', `"author" IN ('sender', 'recipient')`)
@Check('messages_parts_array', `jsonb_typeof("parts") = 'array' AND jsonb_array_length("parts") >= 1`)
@Check('messages_payload_object', `jsonb_typeof("payload") = 'object'`)
export class MessageEntity {
  @PrimaryColumn({ type: 'char', length: 26, primaryKeyConstraintName: 'messages_pkey' })
  taskId: string;

  @ManyToOne('TaskEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'task_id', foreignKeyConstraintName: 'messages_task_fkey' })
  task?: Relation<TaskEntity>;

  @PrimaryColumn({ type: 'integer', primaryKeyConstraintName: 'messages_pkey' })
  sequenceNo: number;

  @Column({ type: 'varchar', length: TASK_LIMITS.messageIdChars })
  id: string;

  @Column({ type: 'varchar', length: 10 })
  author: 'sender' | 'recipient';

  @Column({ type: 'varchar', length: AGENT_LIMITS.idChars })
  authorId: string;

  @Column({ type: 'varchar', length: AGENT_LIMITS.handleChars })
  fromHandle: string;

  @Column({ type: 'text' })
  body: string;

  @Column({ type: 'jsonb' })
  parts: PartView[];

  @Column({ type: 'jsonb', default: () => "'{}'" })
  payload: Record<string, unknown>;

  /** Bytes of the content as JSON (what a reply carries), written with it. */
  @Column({ type: 'integer', default: 0 })
  sizeBytes: number;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
