import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { AGENT_LIMITS, TASK_LIMITS, type Intent, type ProposedAction, type TaskHold, type TaskState, type TaskToolPrompts } from '@app/contracts';

const STATES = `'held', 'pending', 'accepted', 'input_required', 'completed', 'cancelled', 'failed', 'rejected'`;

/**
 * A task (an A2A task) between a sender and a recipient agent, with the participants'
 * identities copied at creation. The index columns `id` and `status_timestamp` are descending in
 * the schema; TypeORM has no column order for an index, which it does not compare.
 */
@Entity({ name: 'tasks' })
@Index('tasks_recipient_created_idx', ['recipientId', 'id'])
@Index('tasks_sender_created_idx', ['senderId', 'id'])
@Index('tasks_recipient_status_idx', ['recipientId', 'statusTimestamp', 'id'])
@Index('tasks_sender_status_idx', ['senderId', 'statusTimestamp', 'id'])
@Index('tasks_context_idx', ['contextId'])
@Index('tasks_created_at_idx', ['createdAt', 'id'])
@Index('tasks_state_created_at_idx', ['state', 'createdAt', 'id'])
@Index('tasks_sender_created_at_idx', ['senderId', 'createdAt', 'id'])
@Index('tasks_recipient_created_at_idx', ['recipientId', 'createdAt', 'id'])
@Index('tasks_pair_created_at_idx', ['senderId', 'recipientId', 'createdAt'])
@Index('tasks_terminal_status_idx', { synchronize: false })
@Index('tasks_open_sender_org_idx', { synchronize: false })
@Index('tasks_completed_at_idx', ['completedAt'], { where: '"completed_at" IS NOT NULL' })
@Index('tasks_hold_expires_idx', ['holdExpiresAt'], { where: `"state" = 'held'` })
@Index('tasks_tool_prompts_idx', ['id'], { where: `"tool_prompts" IS NOT NULL` })
@Index('tasks_root_depth_idx', ['rootTaskId', 'depth', 'id'])
@Index('tasks_trace_idx', ['traceId'])
@Check('tasks_id_ulid', `"id" ~ '^[0-9A-HJKMNP-TV-Z]{26}$'`)
@Check('tasks_state_known', `"state" IN (${STATES})`)
@Check('tasks_intent_known', `"intent" IN ('inform', 'ask_question', 'propose_action')`)
@Check('tasks_proposed_action_matches_intent', `("intent" = 'propose_action') = ("proposed_action" IS NOT NULL AND jsonb_typeof("proposed_action") = 'object')`)
@Check('tasks_metadata_object', `jsonb_typeof("metadata") = 'object'`)
@Check('tasks_message_count_range', `"message_count" BETWEEN 0 AND ${TASK_LIMITS.messagesPerTask}`)
@Check('tasks_version_positive', `"version" >= 1`)
@Check('tasks_accepted_at_when_accepted', `"state" NOT IN ('accepted', 'input_required', 'completed', 'failed') OR "accepted_at" IS NOT NULL`)
@Check('tasks_completed_at_when_completed', `("state" = 'completed') = ("completed_at" IS NOT NULL)`)
@Check('tasks_cancelled_at_when_cancelled', `("state" = 'cancelled') = ("cancelled_at" IS NOT NULL)`)
@Check('tasks_failed_at_when_failed', `("state" = 'failed') = ("failed_at" IS NOT NULL)`)
@Check('tasks_rejected_at_when_rejected', `("state" = 'rejected') = ("rejected_at" IS NOT NULL)`)
@Check('tasks_held_is_hidden', `"state" <> 'held' OR ("hidden_from_recipient" AND "hold" IS NOT NULL AND "hold_expires_at" IS NOT NULL)`)
@Check('tasks_tool_prompts_object', `"tool_prompts" IS NULL OR jsonb_typeof("tool_prompts") = 'object'`)
@Check('tasks_hidden_only_when_held', `NOT "hidden_from_recipient" OR "hold" IS NOT NULL`)
@Check('tasks_root_sender', `"root_task_id" IS NOT NULL OR "root_sender_handle" IS NULL`)
@Check('tasks_depth_range', `"depth" >= 0 AND ("depth" = 0) = ("parent_task_id" IS NULL) AND ("parent_task_id" IS NULL) = ("root_task_id" IS NULL)`)
@Check('tasks_trace_format', `("trace_id" IS NULL OR "trace_id" ~ '^[0-9a-f]{32}$') AND ("trace_span_id" IS NULL OR "trace_span_id" ~ '^[0-9a-f]{16}$')`)
@Check('tasks_hold_object', `"hold" IS NULL OR jsonb_typeof("hold") = 'object'`)
export class TaskEntity {
  /** ULID. */
  @PrimaryColumn({ type: 'char', length: 26, primaryKeyConstraintName: 'tasks_pkey' })
  id: string;

  @Column({ type: 'varchar', length: TASK_LIMITS.contextIdChars })
  contextId: string;

  @Column({ type: 'varchar', length: AGENT_LIMITS.idChars })
  senderId: string;

  @Column({ type: 'varchar', length: AGENT_LIMITS.handleChars })
  senderHandle: string;

  @Column({ type: 'varchar', length: AGENT_LIMITS.nameChars })
  senderName: string;

  @Column({ type: 'varchar', length: AGENT_LIMITS.roleChars, nullable: true })
  senderRole: string | null;

  @Column({ type: 'varchar', length: AGENT_LIMITS.idChars })
  recipientId: string;

  @Column({ type: 'varchar', length: AGENT_LIMITS.handleChars })
  recipientHandle: string;

  @Column({ type: 'varchar', length: AGENT_LIMITS.nameChars })
  recipientName: string;

  @Column({ type: 'varchar', length: AGENT_LIMITS.roleChars, nullable: true })
  recipientRole: string | null;

  @Column({ type: 'varchar', length: 20, default: 'pending' })
  state: TaskState;

  @Column({ type: 'varchar', length: 20, default: 'inform' })
  intent: Intent;

  @Column({ type: 'text' })
  summary: string;

  @Column({ type: 'jsonb', nullable: true })
  proposedAction: ProposedAction | null;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  metadata: Record<string, unknown>;

  @Column({ type: 'text', nullable: true })
  resultSummary: string | null;

  @Column({ type: 'text', nullable: true })
  reason: string | null;

  @Column({ type: 'integer', default: 0 })
  messageCount: number;

  /** Bumped by every change of the task (transition, message, artifact). */
  @Column({ type: 'integer', default: 1 })
  version: number;

  @Column({ type: 'timestamptz', nullable: true })
  acceptedAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  completedAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  cancelledAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  failedAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  rejectedAt: Date | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;

  /** When the state last changed (A2A `status.timestamp`). */
  @Column({ type: 'timestamptz', default: () => 'now()' })
  statusTimestamp: Date;

  /** Set on a handoff a hold rule kept for approval: the rule, the reason, the deadline and how it ended. */
  @Column({ type: 'jsonb', nullable: true })
  hold: TaskHold | null;

  /** When a held task expires (the sweep denies it); kept after the hold ends. */
  @Column({ type: 'timestamptz', nullable: true })
  holdExpiresAt: Date | null;

  /** True while the recipient must not see the task: held, and after a hold that ended other than approved. */
  @Column({ type: 'boolean', default: false })
  hiddenFromRecipient: boolean;

  /** Set on a handoff a tool-prompt rule matched: its tool prompts are answered by people, and their answers. */
  @Column({ type: 'jsonb', nullable: true })
  toolPrompts: TaskToolPrompts | null;

  /** The handoff this one was made for (docs/chains.md); null for a chain's root. */
  @Column({ type: 'char', length: 26, nullable: true })
  parentTaskId: string | null;

  /** The first handoff of the chain; null on a root, which is its own. */
  @Column({ type: 'char', length: 26, nullable: true })
  rootTaskId: string | null;

  /** How deep the handoff sits below its chain's root (the root: 0). */
  @Column({ type: 'integer', default: 0 })
  depth: number;

  /** The W3C trace id of the handoff's chain (its root's): what the `traceparent` of its deliveries names, and what links a call that carries it back (docs/chains.md). */
  @Column({ type: 'char', length: 32, nullable: true })
  traceId: string | null;

  /** The span its deliveries continue when the call that causes one is in another trace: the span that created it, or one made for it. */
  @Column({ type: 'char', length: 16, nullable: true })
  traceSpanId: string | null;
  /** The sender of the chain's root (on whose behalf the chain runs); null on a root, whose own sender it is, and on a handoff linked before it was kept. */
  @Column({ type: 'varchar', length: 255, nullable: true })
  rootSenderHandle: string | null;

  /** Bytes of the messages and artifacts its sender wrote into it (docs/orgs.md#quotas), counted to the sender's org. */
  @Column({ type: 'bigint', default: 0, select: false })
  senderStoredBytes: string;

  /** Bytes of the messages and artifacts its recipient wrote into it, counted to the recipient's org. */
  @Column({ type: 'bigint', default: 0, select: false })
  recipientStoredBytes: string;
}
