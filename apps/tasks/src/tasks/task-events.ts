import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { currentTraceParent } from '@app/tracing';
import { TASK_EVENT_SCHEMA_VERSION, taskEventSubject, type TaskEvent, type TaskEventArtifact, type TaskEventMessage, type TaskEventType } from '@app/contracts';
import { OutboxEventEntity } from '../outbox/outbox-event.entity';
import type { MessageRow, TaskRow } from './task-rows';

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
      ...(artifact ? { artifact } : {}),
    },
  };
}

/** Writes one task event to the outbox in the caller's transaction (the outbox relay publishes it to JetStream afterwards). */
export async function writeTaskEvent(
  manager: EntityManager,
  type: TaskEventType,
  task: TaskRow,
  latest: MessageRow | null,
  at: Date,
  artifact?: TaskEventArtifact,
): Promise<string> {
  const event = taskEvent(type, task, latest, at, artifact);
  await manager.insert(OutboxEventEntity, {
    id: event.id,
    subject: event.subject,
    type,
    taskId: task.id,
    payload: event.payload,
    createdAt: at,
    traceParent: currentTraceParent(),
  });
  return event.id;
}

/**
 * One `artifact_updated` event per artifact a change added, replaced or appended to, in the order
 * given, before the change's own event: one INSERT for all of them, none without artifacts.
 */
export async function writeArtifactEvents(manager: EntityManager, task: TaskRow, artifacts: TaskEventArtifact[], at: Date): Promise<void> {
  if (artifacts.length === 0) return;
  const traceParent = currentTraceParent();
  const rows = artifacts.map((artifact) => {
    const event = taskEvent('artifact_updated', task, null, at, artifact);
    return { id: event.id, subject: event.subject, type: event.type, taskId: task.id, payload: event.payload, createdAt: at, traceParent };
  });
  await manager.insert(OutboxEventEntity, rows);
}
