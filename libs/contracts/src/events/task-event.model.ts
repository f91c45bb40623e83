import type { ArtifactView, PartView, TaskState } from '../tasks/task.model';
import { TASK_EVENT_SUBJECT_PREFIX } from '../subjects';

export const TASK_EVENT_TYPES = [
  'created',
  'message_appended',
  'artifact_updated',
  'accepted',
  'input_required',
  'completed',
  'failed',
  'rejected',
  'canceled',
] as const;
export type TaskEventType = (typeof TASK_EVENT_TYPES)[number];

export const TASK_EVENT_SCHEMA_VERSION = 1;

/**
 * The header the outbox relay puts on every task event it publishes: the event's position in the
 * outbox (a decimal bigint), which orders one task's events and is the stream event id
 * (docs/events.md#positions-and-stream-ids).
 */
export const TASK_EVENT_POSITION_HEADER = 'Relay-Event-Position';

/** The message a task event is about, with what a stream needs to render it. */
export interface TaskEventMessage {
  id: string;
  sequence_no: number;
  from: string;
  body: string;
  /** The message's parts as stored (absent on events written before they were carried). */
  parts?: PartView[];
  /** The message's metadata (`payload`), when it has any. */
  payload?: Record<string, unknown>;
}

/** One artifact as an `artifact_updated` event carries it: the whole artifact, or the chunk appended (then `parts` holds the chunk's parts only). */
export interface TaskEventArtifact extends ArtifactView {
  append: boolean;
  last_chunk: boolean;
}

/** The JetStream subject of a task event type: `relay.events.task.<event>`. */
export function taskEventSubject(type: TaskEventType): string {
  return `${TASK_EVENT_SUBJECT_PREFIX}.${type}`;
}

/** Versioned payload of every task event (documented for internal consumers in docs/events.md). */
export interface TaskEvent {
  schema_version: typeof TASK_EVENT_SCHEMA_VERSION;
  event_id: string;
  type: TaskEventType;
  task_id: string;
  context_id: string;
  sender: string;
  recipient: string;
  state: TaskState;
  sequence_no: number | null;
  occurred_at: string;
  /** Enough of the task to act on without reading it back. */
  task: {
    intent: string;
    summary: string;
    message_count: number;
    latest_message: TaskEventMessage | null;
    result_summary: string | null;
    reason: string | null;
  };
  /** On `artifact_updated` only: the artifact added or replaced, or the chunk appended to it. */
  artifact?: TaskEventArtifact;
  /**
   * `sender` on the events of a task its recipient never saw (held for approval, then denied,
   * expired or cancelled): no stream, webhook or push of the recipient may carry them.
   */
  audience?: 'sender';
}

/** A task event with its outbox position, as a replay reads it back. */
export interface PositionedTaskEvent {
  /** The outbox position (decimal bigint as a string). */
  position: string;
  event: TaskEvent;
}
