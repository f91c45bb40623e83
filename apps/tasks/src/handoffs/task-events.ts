import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { currentTraceParent } from '@app/tracing';
import { TASK_EVENT_SCHEMA_VERSION, taskEventSubject, type TaskEvent, type TaskEventType } from '@app/contracts';
import { OutboxEventEntity } from '../outbox/outbox-event.entity';
import { OUTBOX_NOTIFY_CHANNEL } from '../outbox/outbox.constants';
import type { MessageRow, ThreadRow } from './thread-rows';

/** A task event as the outbox stores it: its id, subject and payload. */
export interface OutboxTaskEvent {
  id: string;
  subject: string;
  type: TaskEventType;
  payload: TaskEvent;
}

export function taskEvent(type: TaskEventType, thread: ThreadRow, latest: MessageRow | null, at: Date): OutboxTaskEvent {
  const id = randomUUID();
  return {
    id,
    type,
    subject: taskEventSubject(type),
    payload: {
      schema_version: TASK_EVENT_SCHEMA_VERSION,
      event_id: id,
      type,
      task_id: thread.id,
      context_id: thread.context_id,
      sender: thread.sender_handle,
      recipient: thread.recipient_handle,
      state: thread.state,
      sequence_no: latest ? latest.sequence_no : null,
      occurred_at: at.toISOString(),
      task: {
        intent: thread.intent,
        summary: thread.summary,
        message_count: thread.message_count,
        latest_message: latest ? { id: latest.id, sequence_no: latest.sequence_no, from: latest.from_handle, body: latest.body } : null,
        result_summary: thread.result_summary,
        reason: thread.reason,
      },
    },
  };
}

/**
 * Writes one task event to the outbox in the caller's transaction (the outbox relay publishes it
 * to JetStream afterwards) and wakes the relay with a NOTIFY delivered at commit.
 */
export async function writeTaskEvent(manager: EntityManager, type: TaskEventType, thread: ThreadRow, latest: MessageRow | null, at: Date): Promise<string> {
  const event = taskEvent(type, thread, latest, at);
  await manager.insert(OutboxEventEntity, {
    id: event.id,
    subject: event.subject,
    type,
    taskId: thread.id,
    payload: event.payload,
    createdAt: at,
    traceParent: currentTraceParent(),
  });
  await manager.query(`SELECT pg_notify('${OUTBOX_NOTIFY_CHANNEL}', '')`);
  return event.id;
}
