import { Check, Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, UpdateDateColumn, type Relation } from 'typeorm';
import { AGENT_LIMITS, TASK_LIMITS } from '@app/contracts';
import type { TaskEntity } from './task.entity';

/** How far a participant has read a task's messages. */
@Entity({ name: 'read_cursors' })
@Check('read_cursors_sequence_range', `"last_read_sequence_no" BETWEEN 0 AND ${TASK_LIMITS.messagesPerTask}`)
export class ReadCursorEntity {
  @PrimaryColumn({ type: 'char', length: 26, primaryKeyConstraintName: 'read_cursors_pkey' })
  taskId: string;

  @ManyToOne('TaskEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'task_id', foreignKeyConstraintName: 'read_cursors_task_fkey' })
  task?: Relation<TaskEntity>;

  @PrimaryColumn({ type: 'varchar', length: AGENT_LIMITS.idChars, primaryKeyConstraintName: 'read_cursors_pkey' })
  participantId: string;

  @Column({ type: 'integer', default: 0 })
  lastReadSequenceNo: number;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
