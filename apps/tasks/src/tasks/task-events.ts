import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { currentTraceParent } from '@app/tracing';
import { TASK_EVENT_SCHEMA_VERSION, taskEventSubject, type TaskEvent, type TaskEventType } from '@app/contracts';
import { OutboxEventEntity } from '../outbox/outbox-event.entity';
import { OUTBOX_NOTIFY_CHANNEL } from '../outbox/outbox.constants';
import type { MessageRow, TaskRow } from './task-rows';

/** A task event as the outbox stores it: its id, subject and payload. */
export interface OutboxTaskEvent {
  id: string;
  subject: string;
  type: TaskEventType;
  payload: TaskEvent;
}

export function taskEvent(type: TaskEventType, task: TaskRow, latest: MessageRow | null, at: Date): OutboxTaskEvent {
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
        latest_message: latest ? { id: latest.id, sequence_no: latest.sequence_no, from: latest.from_handle, body: latest.body } : null,
        result_summary: task.result_summary,
        reason: task.reason,
      },
    },
  };
}

/**
 * Writes one task event to the outbox in the caller's transaction (the outbox relay publishes it
 * to JetStream afterwards) and wakes the relay with a NOTIFY delivered at commit.
 */
export async function writeTaskEvent(manager: EntityManager, type: TaskEventType, task: TaskRow, latest: MessageRow | null, at: Date): Promise<string> {
  const event = taskEvent(type, task, latest, at);
  await manager.insert(OutboxEventEntity, {
    id: event.id,
    subject: event.subject,
    type,
    taskId: task.id,
    payload: event.payload,
    createdAt: at,
    traceParent: currentTraceParent(),
  });
  await manager.query(`SELECT pg_notify('${OUTBOX_NOTIFY_CHANNEL}', '')`);
  return event.id;
}
