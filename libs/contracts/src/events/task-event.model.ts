import type { TaskState } from '../tasks/task.model';
import { TASK_EVENT_SUBJECT_PREFIX } from '../subjects';

export const TASK_EVENT_TYPES = ['created', 'message_appended', 'accepted', 'input_required', 'completed', 'failed', 'rejected', 'canceled'] as const;
export type TaskEventType = (typeof TASK_EVENT_TYPES)[number];

export const TASK_EVENT_SCHEMA_VERSION = 1;

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
    latest_message: { id: string; sequence_no: number; from: string; body: string } | null;
    result_summary: string | null;
    reason: string | null;
  };
}
