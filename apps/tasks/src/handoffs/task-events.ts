import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { currentTraceParent } from '@app/tracing';
import { TASK_EVENT_SCHEMA_VERSION, taskEventSubject, type TaskEvent, type TaskEventArtifact, type TaskEventMessage, type TaskEventType } from '@app/contracts';
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

/** The message as an event carries it: enough for a stream to render it without reading it back. */
function eventMessage(message: MessageRow): TaskEventMessage {
  const payload = message.payload && Object.keys(message.payload).length > 0 ? { payload: message.payload } : {};
  return { id: message.id, sequence_no: message.sequence_no, from: message.from_handle, body: message.body, parts: message.parts, ...payload };
}

export function taskEvent(type: TaskEventType, thread: ThreadRow, latest: MessageRow | null, at: Date, artifact?: TaskEventArtifact): OutboxTaskEvent {
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
        latest_message: latest ? eventMessage(latest) : null,
        result_summary: thread.result_summary,
        reason: thread.reason,
      },
      ...(artifact ? { artifact } : {}),
    },
  };
}

/**
 * Writes one task event to the outbox in the caller's transaction (the outbox relay publishes it
 * to JetStream afterwards) and wakes the relay with a NOTIFY delivered at commit.
 */
export async function writeTaskEvent(
  manager: EntityManager,
  type: TaskEventType,
  thread: ThreadRow,
  latest: MessageRow | null,
  at: Date,
  artifact?: TaskEventArtifact,
): Promise<string> {
  const event = taskEvent(type, thread, latest, at, artifact);
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

/**
 * One `artifact_updated` event per artifact a change added, replaced or appended to, in the order
 * given, before the change's own event: one INSERT for all of them, none without artifacts. The
 * NOTIFY is left to the change's own event when one follows (`eventFollows`).
 */
export async function writeArtifactEvents(
  manager: EntityManager,
  thread: ThreadRow,
  artifacts: TaskEventArtifact[],
  at: Date,
  eventFollows: boolean,
): Promise<void> {
  if (artifacts.length === 0) return;
  const traceParent = currentTraceParent();
  const rows = artifacts.map((artifact) => {
    const event = taskEvent('artifact_updated', thread, null, at, artifact);
    return { id: event.id, subject: event.subject, type: event.type, taskId: thread.id, payload: event.payload, createdAt: at, traceParent };
  });
  await manager.insert(OutboxEventEntity, rows);
  if (!eventFollows) await manager.query(`SELECT pg_notify('${OUTBOX_NOTIFY_CHANNEL}', '')`);
}
