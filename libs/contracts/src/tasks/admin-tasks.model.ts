import type { PositionedTaskEvent, TaskEventType } from '../events/task-event.model';
import type { FailureCountsReply } from '../notifier/deliveries.model';
import type { ArtifactView, Intent, MessageView, TaskChain, TaskHold, TaskState, TaskView } from './task.model';

/** The tasks service's admin replies and the admin API's answers built from them (`GET /admin/tasks`, `/admin/search`, `/admin/overview`, …). */

export interface AdminParty {
  handle: string;
  name: string;
}

export interface AdminTaskRow {
  id: string;
  context_id: string;
  state: TaskState;
  intent: Intent;
  summary: string;
  sender: AdminParty;
  recipient: AdminParty;
  message_count: number;
  artifact_count: number;
  created_at: string;
  updated_at: string;
  status_timestamp: string;
  /** Set on a handoff a hold rule kept for approval: the rule, its deadline, four eyes and how it ended. */
  hold?: Pick<TaskHold, 'rule' | 'expires_at' | 'four_eyes' | 'outcome'> | null;
  /** Where the handoff sits in its chain (docs/chains.md). */
  chain?: TaskChain;
  /**
   * On the list: the outbox position of the task's newest event that the row's state includes
   * (null when retention deleted them all). A snapshot's reader follows the event stream and skips
   * each task's events at or below it (docs/events.md#snapshot-and-follow).
   */
  last_event_position?: string | null;
}

export interface AdminTaskPage {
  items: AdminTaskRow[];
  next_cursor: string | null;
}

export interface TimelineEntry {
  position: string;
  event: string;
  at: string;
  actor: string | null;
  state: TaskState;
  message?: MessageView;
  artifact?: ArtifactView;
  reason?: string | null;
}

export interface TaskAuditRow {
  at: string;
  actor: string | null;
  action: string;
  from_state: TaskState | null;
  to_state: TaskState | null;
}

export interface AdminTaskDetail {
  task: TaskView;
  /** Oldest first; the first `ADMIN_TASK_LIMITS.timelineEntries` entries that fit `detailReplyBytes`. */
  timeline: TimelineEntry[];
  /** Whether the timeline was cut to fit one reply (the task has more events than it shows). */
  timeline_truncated: boolean;
  audit: TaskAuditRow[];
  /** Whether the task's messages were cut to fit one reply (the oldest ones are shown). */
  messages_truncated: boolean;
}

export interface HighlightFragment {
  text: string;
  match: boolean;
}

export interface SearchHighlight {
  source: 'message' | 'artifact';
  sequence_no?: number;
  artifact_name?: string;
  fragments: HighlightFragment[];
}

export interface AdminSearchHit {
  task: AdminTaskRow;
  rank: number;
  highlights: SearchHighlight[];
}

export interface AdminSearchPage {
  items: AdminSearchHit[];
  next_cursor: string | null;
}

/** `tasks/search` hits: the caller's tasks (without messages or artifacts), as `tasks/list` renders them. */
export interface AgentSearchReply {
  items: Array<{ task: TaskView; rank: number; highlights: SearchHighlight[] }>;
  next_cursor: string | null;
}

export interface AdminEventsReply {
  events: PositionedTaskEvent[];
  has_more: boolean;
  /** The newest outbox position when read. */
  position: string;
}

export interface AdminCountsReply {
  inbox: Record<TaskState, number>;
  sent: Record<TaskState, number>;
}

export interface AdminOverviewReply {
  per_minute: Array<{ minute: string; created: number; completed: number }>;
  open_by_state: { pending: number; accepted: number; input_required: number };
  oldest_pending: { id: string; created_at: string; sender: string; recipient: string } | null;
  outbox_lag: { unpublished: number; oldest_unpublished_ms: number | null };
}

/** `GET /admin/overview`: the tasks service's overview with the notifier's delivery failures. */
export type AdminOverview = AdminOverviewReply & { delivery_failures: FailureCountsReply };

/**
 * A handoff's chain as the tasks service reads it (docs/chains.md): `nodes` holds the path from
 * the root down to the task, the task's children, and the chain's tree breadth-first from the root
 * (by depth, then creation) up to the limit asked for; every node's parent is among them.
 */
export interface AdminTaskChainReply {
  task_id: string;
  root_task_id: string;
  /** Each handoff once, by depth then creation; its place in the chain is its row's `chain`. */
  nodes: AdminTaskRow[];
  /** Handoffs in the chain's whole tree, its root included. */
  total: number;
  /** Whether the tree has handoffs that `nodes` leaves out (`total` > `nodes.length`). */
  nodes_truncated: boolean;
}

/** A handoff of a chain that the chain bounds refused: its admin audit row (`handoff.refuse`), as the chain view reads it. */
export interface AdminChainRefusal {
  /** The audit row's id. */
  id: string;
  at: string;
  reason: string;
  sender: string;
  recipient: string | null;
  limit: number | null;
  limit_name: string | null;
  /** The handles from the root's sender to the refused recipient. */
  path: string[];
  parent_task_id: string | null;
}

/** `GET /admin/tasks/{id}/chain`: the chain's handoffs and the handoffs its bounds refused, newest first. */
export interface AdminTaskChain extends AdminTaskChainReply {
  refusals: AdminChainRefusal[];
  /** Whether the chain has older refusals than `refusals` shows. */
  refusals_truncated: boolean;
}

/** An answer of the admin API to a role that may not read what agents wrote (the `auditor`): that text left out. */
export type WithHiddenBodies<T> = T & { bodies_hidden?: true };

/** A task event of `GET /admin/events` (SSE `event: task`), as the console shows it. */
export interface AdminTaskEvent {
  position: string;
  event: TaskEventType;
  task_id: string;
  state: TaskState;
  intent: Intent;
  summary: string;
  /** Handles. */
  sender: string;
  recipient: string;
  at: string;
}
