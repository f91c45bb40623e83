import type { MessageView, TaskEvent, TaskEventMessage, WireVersion } from '@app/contracts';
import { toWireRole, toWireState } from './mapping';
import { renderArtifact, renderMessage, renderPart, type Json } from './render';

/** The message an event carries as the task's view holds it (its parts empty on events written before they were carried). */
export function eventMessageView(event: TaskEvent, message: TaskEventMessage): MessageView {
  return {
    id: message.id,
    sequence_no: message.sequence_no,
    from: message.from,
    author: message.from === event.sender ? 'sender' : 'recipient',
    body: message.body,
    parts: message.parts ?? [],
    payload: message.payload ?? {},
    created_at: event.occurred_at,
  };
}

/** Events whose message is their own (a resume's `accepted` repeats the answer its `message_appended` carried; `held` carries the sender's own message). */
function carriesOwnMessage(event: TaskEvent): boolean {
  return event.type !== 'accepted' && event.type !== 'artifact_updated' && event.type !== 'held';
}

/**
 * One task event as one A2A stream item (docs/events.md#stream-events): `created` as the Task,
 * `artifact_updated` as an artifact update (a chunk when `append`), every other event as a status
 * update whose `status.message` is the message the event added. `final` marks, in v0.3, the last
 * event of the stream.
 */
export function renderTaskEvent(event: TaskEvent, version: WireVersion, final: boolean): Json {
  const ids = { id: event.task_id, context_id: event.context_id };
  const latest = event.task.latest_message;
  const message = latest && carriesOwnMessage(event) ? renderMessage(eventMessageView(event, latest), ids, version) : undefined;
  const status: Json = { state: toWireState(event.state, version), ...(message ? { message } : {}), timestamp: event.occurred_at };
  if (event.type === 'created') {
    const task: Json = {
      ...(version === '0.3' ? { kind: 'task' } : {}),
      id: event.task_id,
      contextId: event.context_id,
      status,
      ...(message ? { history: [message] } : {}),
      metadata: {
        relay: {
          intent: event.task.intent,
          sender: event.sender,
          recipient: event.recipient,
          ...(event.chain ? { chain: { parentTaskId: event.chain.parent_task_id, rootTaskId: event.chain.root_task_id, depth: event.chain.depth } } : {}),
        },
      },
    };
    return version === '1.0' ? { task } : task;
  }
  if (event.type === 'artifact_updated' && event.artifact) {
    const chunk = event.artifact;
    const artifact = renderArtifact({ ...chunk }, version);
    // ProtoJSON (v1.0) leaves a false `append` out; v0.3 spells it.
    if (version === '1.0') {
      return {
        artifactUpdate: {
          taskId: event.task_id,
          contextId: event.context_id,
          artifact,
          ...(chunk.append ? { append: true } : {}),
          lastChunk: chunk.last_chunk,
        },
      };
    }
    return { kind: 'artifact-update', taskId: event.task_id, contextId: event.context_id, artifact, append: chunk.append, lastChunk: chunk.last_chunk };
  }
  const update: Json = { taskId: event.task_id, contextId: event.context_id, status };
  return version === '1.0' ? { statusUpdate: update } : { kind: 'status-update', ...update, final };
}

/** The event's latest message as a push receiver gets it (its first text part), or null. Authors from the task's sender have role user, the recipient's role agent. */
function pushedMessage(event: TaskEvent, version: WireVersion): Json | null {
  const message = event.task.latest_message;
  if (!message) return null;
  return {
    ...(version === '0.3' ? { kind: 'message' } : {}),
    messageId: message.id,
    taskId: event.task_id,
    contextId: event.context_id,
    role: toWireRole(message.from === event.sender ? 'sender' : 'recipient', version),
    parts: [renderPart({ kind: 'text', text: message.body }, version)],
  };
}

/**
 * One task event as the body A2A push receivers expect, by the version the config was registered
 * with: v1.0 a StreamResponse (`task` for a new task, `message` for a message, `statusUpdate` for
 * a state change); v0.3 the task object, its `metadata.event` naming the event (`eventName`).
 */
export function renderPushBody(event: TaskEvent, version: WireVersion, eventName: string): Json {
  const message = pushedMessage(event, version);
  const status = { state: toWireState(event.state, version), timestamp: event.occurred_at };
  if (version === '0.3') {
    return {
      kind: 'task',
      id: event.task_id,
      contextId: event.context_id,
      status,
      ...(message && (event.type === 'created' || event.type === 'message_appended') ? { history: [message] } : {}),
      metadata: { event: eventName, event_id: event.event_id },
    };
  }
  if (event.type === 'created') return { task: { id: event.task_id, contextId: event.context_id, status, ...(message ? { history: [message] } : {}) } };
  if (event.type === 'message_appended' && message) return { message };
  return { statusUpdate: { taskId: event.task_id, contextId: event.context_id, status } };
}
