import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import type { ReportedProgress } from '@app/a2a';
import type { ParticipantRef } from '@app/contracts';

/**
 * A relay task delivered to an upstream agent's A2A server, beside the upstream task it became:
 * followed (polled) until the upstream task ends, with what of it the relay task already holds.
 */
@Entity({ name: 'upstream_tasks' })
@Check('upstream_tasks_status', `"status" IN ('following', 'done')`)
@Check('upstream_tasks_schedule', `("status" = 'following') = ("next_poll_at" IS NOT NULL)`)
export class UpstreamTaskEntity {
  @PrimaryColumn({ type: 'varchar', length: 255, primaryKeyConstraintName: 'upstream_tasks_pkey' })
  taskId: string;

  /** The upstream agent (the relay task's recipient), as the tasks service knows it. */
  @Column({ type: 'jsonb' })
  recipient: ParticipantRef;

  @Column({ type: 'varchar', length: 255 })
  sender: string;

  /** The upstream's task id and context id (null when it answered with a message only). */
  @Column({ type: 'varchar', length: 255, nullable: true })
  upstreamTaskId: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  upstreamContextId: string | null;

  /** The upstream's answer when it was a message rather than a task (applied as the task's completion). */
  @Column({ type: 'jsonb', nullable: true })
  answer: unknown;

  @Column({ type: 'varchar', length: 16 })
  status: 'following' | 'done';

  @Column({ type: 'jsonb' })
  reported: ReportedProgress;

  @Index('upstream_tasks_due_idx', { where: `"status" = 'following'` })
  @Column({ type: 'timestamptz', nullable: true })
  nextPollAt: Date | null;

  /** The wait before the next poll: short while the upstream changes, doubling while it does not. */
  @Column({ type: 'integer' })
  pollIntervalMs: number;

  @Column({ type: 'timestamptz', nullable: true })
  lockedUntil: Date | null;

  @Column({ type: 'integer', default: 0 })
  polls: number;

  /** The polls in a row that got no whole answer within the deadline (a whole answer starts it over). */
  @Column({ type: 'integer', default: 0 })
  timedOutPolls: number;

  /** The SHA-256 (hex) of the token the relay gave the upstream for its push notifications about this task (null: not followed by push). */
  @Column({ type: 'varchar', length: 64, nullable: true })
  pushTokenHash: string | null;

  @Column({ type: 'text', nullable: true })
  lastError: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}
