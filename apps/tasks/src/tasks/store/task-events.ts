import { randomUUID } from 'node:crypto';
import { TASK_EVENT_SCHEMA_VERSION, taskEventSubject, type TaskEvent, type TaskEventArtifact, type TaskEventMessage, type TaskEventType } from '@app/contracts';
import { toTaskChain, type MessageRow, type TaskRow } from './task-rows';

/** A task event as the outbox stores it: its id, subject and payload. */
export interface OutboxTaskEvent {
  id: string;
  subject: string;
  type: TaskEventType;
  payload: TaskEvent;
}

/** The message as an event carries it: enough for a stream to render it without reading it back. */
function eventMessage(message: MessageRow): TaskEventMessage {
  const payload = message.payload && Object.keys(message.payload).length > 0 ? { payload: message.payload } : {};
  return { id: message.id, sequence_no: message.sequence_no, from: message.from_handle, body: message.body, parts: message.parts, ...payload };
}

export function taskEvent(type: TaskEventType, task: TaskRow, latest: MessageRow | null, at: Date, artifact?: TaskEventArtifact): OutboxTaskEvent {
  const id = randomUUID();
  return {
    id,
    type,
    subject: taskEventSubject(type),
    payload: {
      schema_version: TASK_EVENT_SCHEMA_VERSION,
      event_id: id,
      type,
      task_id: task.id,
      context_id: task.context_id,
      sender: task.sender_handle,
      recipient: task.recipient_handle,
      state: task.state,
      sequence_no: latest ? latest.sequence_no : null,
      occurred_at: at.toISOString(),
      task: {
        intent: task.intent,
        summary: task.summary,
        message_count: task.message_count,
        latest_message: latest ? eventMessage(latest) : null,
        result_summary: task.result_summary,
        reason: task.reason,
      },
      chain: { ...toTaskChain(task), root_sender: task.root_sender_handle ?? (task.root_task_id === null ? task.sender_handle : undefined) },
      ...(artifact ? { artifact } : {}),
      ...(type === 'held' && task.hold
        ? { hold: { rule: task.hold.rule, reason: task.hold.reason, expires_at: task.hold.expires_at, four_eyes: task.hold.four_eyes } }
        : {}),
      // A task its recipient never saw (held, then denied, expired or cancelled) tells only its sender.
      ...(task.hidden_from_recipient ? { audience: 'sender' as const } : {}),
    },
  };
}
