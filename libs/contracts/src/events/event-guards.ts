import type { AgentUpdatedEvent } from './agent-event.model';
import type { PushConfigEvent } from './push-config-event.model';
import { TASK_EVENT_TYPES, type TaskEvent } from './task-event.model';

/**
 * Shape checks of the relay's own events as a service reads them off NATS: only the relay's
 * services may publish them, so these are cheap checks of the fields a reader relies on, not the
 * full schema.
 */
export function isTaskEvent(value: unknown): value is TaskEvent {
  const event = value as Partial<TaskEvent> | null;
  return (
    typeof event === 'object' &&
    event !== null &&
    typeof event.event_id === 'string' &&
    typeof event.task_id === 'string' &&
    typeof event.sender === 'string' &&
    typeof event.recipient === 'string' &&
    TASK_EVENT_TYPES.includes(event.type as TaskEvent['type']) &&
    typeof event.task === 'object' &&
    event.task !== null
  );
}

export function isPushConfigEvent(value: unknown): value is PushConfigEvent {
  const event = value as Partial<PushConfigEvent> | null;
  return (
    typeof event === 'object' &&
    event !== null &&
    typeof event.event_id === 'string' &&
    typeof event.task_id === 'string' &&
    typeof event.config_id === 'string' &&
    typeof event.owner === 'string' &&
    (event.version === '0.3' || event.version === '1.0') &&
    typeof event.deleted === 'boolean' &&
    typeof event.occurred_at === 'string' &&
    (event.deleted || typeof event.url === 'string')
  );
}

export function isAgentEvent(value: unknown): value is AgentUpdatedEvent {
  const event = value as Partial<AgentUpdatedEvent> | null;
  return (
    typeof event === 'object' &&
    event !== null &&
    typeof event.event_id === 'string' &&
    typeof event.agent_id === 'string' &&
    typeof event.handle === 'string' &&
    typeof event.occurred_at === 'string' &&
    typeof event.disabled === 'boolean'
  );
}
