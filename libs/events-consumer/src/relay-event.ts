import type { JsMsg } from '@nats-io/jetstream';
import {
  eventKindOfSubject,
  readCloudEventHeaders,
  TASK_EVENT_POSITION_HEADER,
  type AgentUpdatedEvent,
  type CloudEventAttributes,
  type PushConfigEvent,
  type TaskEvent,
} from '@app/contracts';

/** What a relay event's data may be: a task, push-config or agent event payload. */
export type RelayEventData = TaskEvent | PushConfigEvent | AgentUpdatedEvent;

/** One event as the consumer library hands it to its handler. */
export interface RelayEvent<Data = TaskEvent> {
  /** The CloudEvents `id`: the payload's `event_id`, the key to deduplicate on. */
  id: string;
  /** The CloudEvents `type`, e.g. `dev.agentrelay.task.completed.v1`. */
  type: string;
  /** What the event is about (the CloudEvents `subject`): the task id (the agent id for agent events). Events of one subject are handled in order. */
  subject: string;
  /** The CloudEvents `time` (the payload's `occurred_at`). */
  time: string;
  /** The payload. */
  data: Data;
  /** The NATS subject without the deployment's prefix, e.g. `relay.events.task.completed`. */
  natsSubject: string;
  /** The event's sequence in the stream: a start position for another consumer. */
  streamSequence: number;
  /** When the stream stored it. */
  storedAt: Date;
  /** The tasks outbox position (`Relay-Event-Position`), for task and push-config events. */
  position: string | null;
  /** Whether the stream had delivered it before (to this consumer, or to a previous run of it). */
  redelivered: boolean;
  /**
   * The CloudEvents attributes from the message's `ce-` headers; null for an event published before
   * the relay sent them (docs/events.md#cloudevents: its id, type, subject and time above come from
   * the payload and the subject).
   */
  cloudEvent: CloudEventAttributes | null;
}

/** An event the consumer could not read (not JSON, no event id): it is terminated, never handed on. */
export class UnreadableEventError extends Error {}

/** Reads a JetStream message of the event stream published under `subjectPrefix`. */
export function readRelayEvent<Data>(message: JsMsg, subjectPrefix: string): RelayEvent<Data> {
  const natsSubject = subjectPrefix && message.subject.startsWith(`${subjectPrefix}.`) ? message.subject.slice(subjectPrefix.length + 1) : message.subject;
  let data: Record<string, unknown>;
  try {
    data = message.json<Record<string, unknown>>();
  } catch (error) {
    throw new UnreadableEventError(`event ${message.seq} on ${message.subject} is not JSON`, { cause: error });
  }
  if (typeof data !== 'object' || data === null) throw new UnreadableEventError(`event ${message.seq} on ${message.subject} is not a JSON object`);
  const cloudEvent = readCloudEventHeaders((name) => message.headers?.get(name) || undefined);
  const kind = eventKindOfSubject(natsSubject);
  const id = cloudEvent?.id ?? (typeof data.event_id === 'string' ? data.event_id : undefined);
  if (!id) throw new UnreadableEventError(`event ${message.seq} on ${message.subject} has no event id`);
  const subject = cloudEvent?.subject ?? (kind ? kind.subjectOf(data as never) : String(data.task_id ?? data.agent_id ?? id));
  return {
    id,
    type: cloudEvent?.type ?? kind?.cloudEventType ?? natsSubject,
    subject,
    time: cloudEvent?.time ?? String(data.occurred_at ?? ''),
    data: data as Data,
    natsSubject,
    streamSequence: message.seq,
    storedAt: message.time,
    position: message.headers?.get(TASK_EVENT_POSITION_HEADER) || null,
    redelivered: message.redelivered,
    cloudEvent,
  };
}
