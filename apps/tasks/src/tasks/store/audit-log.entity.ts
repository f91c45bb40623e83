import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { AGENT_LIMITS, TASK_LIMITS, type TaskState } from '@app/contracts';
import type { TaskEntity } from './task.entity';

const STATES = `'held', 'pending', 'accepted', 'input_required', 'completed', 'cancelled', 'failed', 'rejected'`;

/** One state transition of a task: who, from which state to which, and why. */
@Entity({ name: 'audit_log' })
@Index('audit_log_task_idx', ['taskId', 'id'])
@Check(
  'audit_log_transition_known',
  `"transition" IN ('create', 'accept', 'complete', 'cancel', 'decline', 'fail', 'request_input', 'resume', 'approve', 'deny', 'expire', 'allow_tool', 'deny_tool')`,
)
@Check('audit_log_from_state_known', `"from_state" IS NULL OR "from_state" IN (${STATES})`)
@Check('audit_log_to_state_known', `"to_state" IN (${STATES})`)
@Check('audit_log_create_has_no_from', `("transition" = 'create') = ("from_state" IS NULL)`)
export class AuditLogEntity {
  /** bigserial; pg returns int8 as a string. */
  @PrimaryGeneratedColumn('increment', { type: 'bigint', primaryKeyConstraintName: 'audit_log_pkey' })
  id: string;

  @Column({ type: 'char', length: 26 })
  taskId: string;

  @ManyToOne('TaskEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'task_id', foreignKeyConstraintName: 'audit_log_task_fkey' })
  task?: Relation<TaskEntity>;

  @Column({ type: 'varchar', length: AGENT_LIMITS.idChars })
  actorId: string;

  @Column({ type: 'varchar', length: 20 })
  transition: string;

  @Column({ type: 'varchar', length: 20, nullable: true })
  fromState: TaskState | null;

  @Column({ type: 'varchar', length: 20 })
  toState: TaskState;

  @Column({ type: 'varchar', length: TASK_LIMITS.sessionIdChars, nullable: true })
  sessionId: string | null;

  @Column({ type: 'text', nullable: true })
  reason: string | null;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  at: Date;
}
