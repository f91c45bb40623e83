import { renderPart, toWireRole, toWireState } from '@app/a2a';
import type { WireVersion, TaskEvent } from '@app/contracts';
import type { PushTarget } from '../targets/delivery-targets';
import { assertionFactsOf } from './delivery-assertion';
import { notifies, WEBHOOK_EVENTS, type PlannedDelivery } from './delivery-planner';

/** The latest message of the event, or null. Authors from the task's sender have role user, the recipient's role agent. */
function latestMessage(event: TaskEvent, version: WireVersion): Record<string, unknown> | null {
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
 * The body A2A push receivers expect, by the version the config was registered with:
 * v1.0 a StreamResponse (`task` for a new task, `message` for a message, `statusUpdate` for a
 * state change); v0.3 the task object.
 */
export function pushBody(event: TaskEvent, version: WireVersion): Record<string, unknown> {
  const message = latestMessage(event, version);
  if (version === '0.3') {
    return {
      kind: 'task',
      id: event.task_id,
      contextId: event.context_id,
      status: { state: toWireState(event.state, version), timestamp: event.occurred_at },
      ...(message && (event.type === 'created' || event.type === 'message_appended') ? { history: [message] } : {}),
      metadata: { event: notifies(event) ? WEBHOOK_EVENTS[event.type].event : event.type, event_id: event.event_id },
    };
  }
  const status = { state: toWireState(event.state, version), timestamp: event.occurred_at };
  if (event.type === 'created') {
    return { task: { id: event.task_id, contextId: event.context_id, status, ...(message ? { history: [message] } : {}) } };
  }
  if (event.type === 'message_appended' && message) return { message };
  return { statusUpdate: { taskId: event.task_id, contextId: event.context_id, status } };
}

/** Every event of a task goes to each of its push configs, with the config's authentication. */
export function planPushDeliveries(event: TaskEvent, targets: PushTarget[]): PlannedDelivery[] {
  if (!notifies(event)) return [];
  return targets.map((target) => {
    const headers: Record<string, string> = {};
    if (target.auth_scheme) headers.authorization = target.auth_credentials ? `${target.auth_scheme} ${target.auth_credentials}` : target.auth_scheme;
    if (target.token) headers['x-a2a-notification-token'] = target.token;
    return {
      channel: 'push',
      event: WEBHOOK_EVENTS[event.type].event,
      target_handle: target.owner_handle,
      target_ref: `push:${target.config_id}`,
      url: target.url,
      content_type: target.version === '1.0' ? 'application/a2a+json' : 'application/json',
      headers,
      body: pushBody(event, target.version),
      assertion: assertionFactsOf(event),
    };
  });
}
