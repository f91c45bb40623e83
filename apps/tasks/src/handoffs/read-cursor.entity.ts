import { Check, Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, UpdateDateColumn, type Relation } from 'typeorm';
import { AGENT_LIMITS, TASK_LIMITS } from '@app/contracts';
import type { ThreadEntity } from './thread.entity';

/** How far a participant has read a thread's messages. */
@Entity({ name: 'read_cursors' })
@Check('read_cursors_sequence_range', `"last_read_sequence_no" BETWEEN 0 AND ${TASK_LIMITS.messagesPerThread}`)
export class ReadCursorEntity {
  @PrimaryColumn({ type: 'char', length: 26, primaryKeyConstraintName: 'read_cursors_pkey' })
  threadId: string;

  @ManyToOne('ThreadEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'thread_id', foreignKeyConstraintName: 'read_cursors_thread_fkey' })
  thread?: Relation<ThreadEntity>;

  @PrimaryColumn({ type: 'varchar', length: AGENT_LIMITS.idChars, primaryKeyConstraintName: 'read_cursors_pkey' })
  participantId: string;

  @Column({ type: 'integer', default: 0 })
  lastReadSequenceNo: number;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
