/**
 * The dialect-neutral view of a task that the tasks service returns. The edge renders it
 * into AgentRelay, A2A v0.3 or A2A v1.0 shapes (docs/dialects.md).
 */
export const TASK_STATES = ['held', 'pending', 'accepted', 'input_required', 'completed', 'cancelled', 'failed', 'rejected'] as const;
export type TaskState = (typeof TASK_STATES)[number];

export const TERMINAL_STATES: readonly TaskState[] = ['completed', 'cancelled', 'failed', 'rejected'];

export function isTerminalState(state: TaskState): boolean {
  return TERMINAL_STATES.includes(state);
}

export const INTENTS = ['inform', 'ask_question', 'propose_action'] as const;
export type Intent = (typeof INTENTS)[number];

export const TRANSITIONS = ['accept', 'complete', 'cancel', 'decline', 'fail', 'request_input'] as const;
export type Transition = (typeof TRANSITIONS)[number];

export const ARTIFACT_TYPES = ['file_diff', 'file_ref', 'test_command', 'api_contract', 'link'] as const;
export type ArtifactType = (typeof ARTIFACT_TYPES)[number];

export interface ParticipantRef {
  id: string;
  handle: string;
  name: string;
  role: string | null;
}

/** A message part, neutral between the A2A versions. */
export type PartView =
  | { kind: 'text'; text: string; media_type?: string; filename?: string; metadata?: Record<string, unknown> }
  | { kind: 'data'; data: unknown; media_type?: string; filename?: string; metadata?: Record<string, unknown> }
  | {
      kind: 'file';
      file: { name?: string; mime_type?: string; bytes?: string; uri?: string };
      metadata?: Record<string, unknown>;
    };

export interface MessageView {
  /** The client's messageId, or a UUID the relay made. */
  id: string;
  sequence_no: number;
  /** Handle of the author. */
  from: string;
  /** Whether the author is the task's sender (A2A role user) or recipient (role agent). */
  author: 'sender' | 'recipient';
  /** The first text part. */
  body: string;
  parts: PartView[];
  /** Travels as the A2A message's metadata. */
  payload: Record<string, unknown>;
  created_at: string;
}

/**
 * An artifact. The AgentRelay typed artifacts (`type` set, fields in `fields`) and standard A2A
 * artifacts (`parts`) share this shape.
 */
export interface ArtifactView {
  artifact_id: string;
  type: ArtifactType | null;
  /** The typed artifact's own fields, e.g. {path, diff} for a file_diff. */
  fields: Record<string, unknown>;
  name: string | null;
  description: string | null;
  parts: PartView[];
  metadata: Record<string, unknown>;
}

export interface ProposedAction {
  description: string;
  target_files: string[];
  rationale: string;
  suggested_diff?: string | null;
}

/** How a hold ended (or `held` while it waits): docs/decisions/0024-held-handoffs.md. */
export const HOLD_OUTCOMES = ['held', 'approved', 'denied', 'expired', 'cancelled'] as const;
export type HoldOutcome = (typeof HOLD_OUTCOMES)[number];

/** The hold of a handoff a rule of its recipient's trust policy kept for a person's approval. */
export interface TaskHold {
  /** The name of the rule that held it. */
  rule: string;
  /** Why, as the sender is told. */
  reason: string;
  expires_at: string;
  four_eyes: boolean;
  outcome: HoldOutcome;
  decided_at: string | null;
  /** The approver's comment (on a deny, also the task's `reason`). */
  comment: string | null;
}

export interface TaskView {
  id: string;
  context_id: string;
  state: TaskState;
  intent: Intent;
  summary: string;
  sender: ParticipantRef;
  recipient: ParticipantRef;
  proposed_action: ProposedAction | null;
  artifacts: ArtifactView[];
  /** Oldest first; possibly only the most recent ones when a history length was asked for. */
  messages: MessageView[];
  message_count: number;
  /** The messages of the other party the caller has not read yet. */
  unread_messages: number;
  result_summary: string | null;
  reason: string | null;
  metadata: Record<string, unknown>;
  accepted_at: string | null;
  completed_at: string | null;
  cancelled_at: string | null;
  failed_at: string | null;
  rejected_at: string | null;
  created_at: string;
  updated_at: string;
  /** When the current state was entered. */
  status_timestamp: string;
  /** Set on a handoff that was held for approval (its recipient sees it only once approved). */
  hold: TaskHold | null;
}
