/**
 * The AgentRelay dialect of the relay's public JSON-RPC API (`POST /a2a`), as a client sees it:
 * snake_case params, `{type: "text"}` parts and the relay's own states and error symbols.
 */
export {
  INTENTS as TASK_INTENTS,
  OPEN_STATES,
  TASK_STATES,
  TERMINAL_STATES,
  TRANSITIONS as TASK_TRANSITIONS,
  type ArtifactType,
  type Intent as TaskIntent,
  type ProposedAction,
  type TaskHold,
  type TaskState,
  type Transition as TaskTransition,
  type TypedArtifact as TaskArtifact,
} from '@app/contracts/model';
import type { Intent as TaskIntent, ProposedAction, TaskHold, TaskState, TypedArtifact as TaskArtifact } from '@app/contracts/model';

export interface AgentRef {
  handle: string;
  name: string;
  role: string | null;
}

export interface TaskMessage {
  id: string;
  sequence_no: number;
  /** Handle of the author. */
  from: string;
  body: string;
  payload: Record<string, unknown>;
  created_at: string;
}

/** `tasks/get`: the task with one page of its messages (`next_after_sequence_no` reads the next). */
export interface Task {
  task_id: string;
  thread_id: string;
  status: { state: TaskState };
  sender: AgentRef;
  /** Handle of the recipient. */
  recipient: string;
  summary: string;
  intent: TaskIntent;
  /** Typed artifacts; artifacts sent by standard A2A clients have `type: null` and parts. */
  artifacts: Array<TaskArtifact | ({ type: null } & Record<string, unknown>)>;
  proposed_action: ProposedAction | null;
  messages: TaskMessage[];
  message_count: number;
  /** The task was cut to fit one reply: more messages follow `next_after_sequence_no`. */
  has_more_messages: boolean;
  next_after_sequence_no: number | null;
  result_summary: string | null;
  reason: string | null;
  accepted_at: string | null;
  completed_at: string | null;
  cancelled_at: string | null;
  failed_at: string | null;
  rejected_at: string | null;
  created_at: string;
  updated_at: string;
  /** On a handoff a rule of its recipient's trust policy held for a person's approval (only its sender sees it held). */
  hold?: TaskHold;
  /** Where the handoff sits in its chain (docs/chains.md); absent from relays that keep no chains. */
  chain?: TaskChainRef;
}

/** A handoff's place in its chain: the handoff it serves, the chain's root, its depth (the root: 0). */
export interface TaskChainRef {
  parent_task_id: string | null;
  root_task_id: string;
  depth: number;
}

/** An item of `tasks/list`. */
export interface TaskListItem {
  task_id: string;
  thread_id: string;
  status: { state: TaskState };
  sender: AgentRef;
  /** Handle of the recipient (an older relay does not send it). */
  recipient?: string;
  summary_preview: string;
  intent: TaskIntent;
  unread_messages: number;
  created_at: string;
  updated_at: string;
  hold?: TaskHold;
}

export interface TaskPage {
  items: TaskListItem[];
  next_cursor: string | null;
}

/** Where a search hit matched: a message (by sequence number) or an artifact name, as plain text fragments. */
export interface SearchHighlight {
  source: 'message' | 'artifact';
  sequence_no?: number;
  artifact_name?: string;
  fragments: Array<{ text: string; match: boolean }>;
}

/** An item of `tasks/search`: the task's `tasks/list` item and where it matched. */
export interface SearchHit extends TaskListItem {
  highlights: SearchHighlight[];
}

export interface SearchPage {
  items: SearchHit[];
  next_cursor: string | null;
}

/** `message/send` without `task_id`. */
export interface CreatedTask {
  task_id: string;
  status: { state: TaskState };
  created_at: string;
  /** Set when a hold rule of the recipient's trust policy kept it for a person's approval. */
  hold?: TaskHold;
  /** Where the handoff sits in its chain (docs/chains.md), on a handoff made for another. */
  chain?: TaskChainRef;
}

/** `message/send` with `task_id`. */
export interface AppendedMessage {
  task_id: string;
  thread_id: string;
  message_id: string;
  sequence_no: number;
  created_at: string;
}

/** `tasks/update`. */
export interface TransitionResult {
  task_id: string;
  thread_id: string;
  status: { state: TaskState };
  accepted_at: string | null;
  completed_at: string | null;
  cancelled_at: string | null;
  failed_at?: string | null;
  rejected_at?: string | null;
  updated_at: string;
}

/** `tasks/cancel`. */
export interface CancelResult {
  task_id: string;
  status: { state: TaskState };
  updated_at: string;
}

/** The public agent card (`GET /.well-known/agent-card.json?id={handle}`). */
export interface AgentCard {
  id: string;
  name: string;
  description: string | null;
  endpoint: string;
  skills: string[];
  metadata: Record<string, unknown>;
}

/**
 * One event of the live inbox (`tasks/watch`, docs/dialects.md#live-inbox-taskswatch): `ready` when
 * the watch starts, else a change of one of the agent's tasks (`created`, `message_appended`,
 * `artifact_updated`, `accepted`, `input_required`, `completed`, `failed`, `rejected`, `canceled`).
 * `id` resumes the watch after this event.
 */
export interface InboxEvent {
  id: string;
  event: string;
  task_id?: string;
  context_id?: string;
  status?: { state: TaskState };
  sender?: string;
  recipient?: string;
  intent?: TaskIntent;
  summary?: string;
  message?: { message_id: string; sequence_no: number; from: string; body: string } | null;
  artifact?: { artifact_id: string; type: string | null; name: string | null; append: boolean; last_chunk: boolean };
  result_summary?: string | null;
  reason?: string | null;
  occurred_at?: string;
}
