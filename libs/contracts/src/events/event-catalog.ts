import type { z } from 'zod';
import { AGENT_UPDATED_EVENT_SUBJECT, agentUpdatedEventSchema, type AgentUpdatedEvent } from './agent-event.model';
import { pushConfigEventSchema, type PushConfigEvent } from './push-config-event.model';
import {
  TASK_EVENT_DESCRIPTIONS,
  TASK_EVENT_SCHEMA_VERSION,
  TASK_EVENT_TYPES,
  taskEventSchemaOf,
  taskEventSubject,
  type TaskEvent,
  type TaskEventType,
} from './task-event.model';
import { PUSH_CONFIG_EVENTS } from '../tasks/push-configs.contract';

/** The CloudEvents `type` of every relay event starts with this reverse-DNS namespace. */
export const CLOUD_EVENT_TYPE_NAMESPACE = 'dev.agentrelay';

/** Where the edge serves the JSON Schemas of the event payloads, under RELAY_PUBLIC_URL. */
export const EVENT_SCHEMAS_PATH = '/schemas/events';

/** Where the edge serves the AsyncAPI document of the relay's NATS interface, under RELAY_PUBLIC_URL. */
export const ASYNCAPI_PATH = '/asyncapi.json';

/** The relay processes that publish events. */
export type EventPublisher = 'tasks' | 'directory';

/**
 * One kind of event the relay publishes on its event stream, at one version: its subject, its
 * CloudEvents type, the one description of its payload, and an example. Everything published about
 * events (the JSON Schemas, the AsyncAPI document, the CloudEvents headers) is made from this table.
 */
export interface RelayEventKind<Payload = unknown> {
  /** `task.completed`, `agent.updated`: the subject below `relay.events.`, and the schema's file name. */
  name: string;
  version: number;
  /** The unprefixed NATS subject. */
  subject: string;
  /** The CloudEvents `type`: `dev.agentrelay.<name>.v<version>`. */
  cloudEventType: string;
  publisher: EventPublisher;
  summary: string;
  schema: z.ZodType<Payload>;
  /** The CloudEvents `subject`: what the event is about (the task, the agent). */
  subjectOf(payload: Payload): string;
  example: Payload;
}

function cloudEventType(name: string, version: number): string {
  return `${CLOUD_EVENT_TYPE_NAMESPACE}.${name}.v${version}`;
}

const EXAMPLE_TIME = '2026-01-01T12:00:00.000Z';

function taskExample(type: TaskEventType): TaskEvent {
  const states: Record<TaskEventType, TaskEvent['state']> = {
    held: 'held',
    created: 'pending',
    message_appended: 'accepted',
    artifact_updated: 'accepted',
    accepted: 'accepted',
    input_required: 'input_required',
    completed: 'completed',
    failed: 'failed',
    rejected: 'rejected',
    canceled: 'cancelled',
  };
  const message = type === 'created' || type === 'held' ? { id: 'm-1', sequence_no: 1, from: 'bob@acme', body: 'Please review the /users refactor.' } : null;
  const last = type === 'completed' ? { id: 'm-3', sequence_no: 3, from: 'frank@acme', body: 'Done.' } : null;
  const latest = message ?? last;
  return {
    schema_version: TASK_EVENT_SCHEMA_VERSION,
    event_id: '0b6a3f0e-6a51-4b6e-9f39-6f0f8e2d7c11',
    type,
    task_id: '01JD4ZK9M1W7C3V6Q2T8R5Y0XA',
    context_id: 'c0a8012e-6c7f-4f2d-8a53-2b9d1e4f7a60',
    sender: 'bob@acme',
    recipient: 'frank@acme',
    state: states[type],
    sequence_no: latest ? latest.sequence_no : null,
    occurred_at: EXAMPLE_TIME,
    task: {
      intent: 'inform',
      summary: 'Please review the /users refactor.',
      message_count: type === 'created' || type === 'held' ? 1 : 3,
      latest_message: latest ? { ...latest, parts: [{ kind: 'text', text: latest.body }] } : null,
      result_summary: type === 'completed' ? 'Reviewed; two comments.' : null,
      reason: type === 'failed' || type === 'rejected' || type === 'canceled' ? 'Out of scope.' : null,
    },
    ...(type === 'held'
      ? {
          hold: {
            rule: 'external proposals',
            reason: `Held for approval by frank@acme's trust policy (rule "external proposals")`,
            expires_at: '2026-01-02T12:00:00.000Z',
            four_eyes: true,
          },
          audience: 'sender',
        }
      : {}),
    ...(type === 'artifact_updated'
      ? {
          artifact: {
            artifact_id: 'review-notes',
            type: null,
            fields: {},
            name: 'Review notes',
            description: null,
            parts: [{ kind: 'text', text: 'Two comments on users.controller.ts.' }],
            metadata: {},
            append: false,
            last_chunk: true,
          },
        }
      : {}),
  } as TaskEvent;
}

const TASK_EVENT_KINDS: RelayEventKind<TaskEvent>[] = TASK_EVENT_TYPES.map((type) => ({
  name: `task.${type}`,
  version: TASK_EVENT_SCHEMA_VERSION,
  subject: taskEventSubject(type),
  cloudEventType: cloudEventType(`task.${type}`, TASK_EVENT_SCHEMA_VERSION),
  publisher: 'tasks',
  summary: TASK_EVENT_DESCRIPTIONS[type],
  schema: taskEventSchemaOf(type) as unknown as z.ZodType<TaskEvent>,
  subjectOf: (event) => event.task_id,
  example: taskExample(type),
}));

function pushConfigKind(which: keyof typeof PUSH_CONFIG_EVENTS): RelayEventKind<PushConfigEvent> {
  const deleted = which === 'deleted';
  return {
    name: `push_config.${which}`,
    version: 1,
    subject: PUSH_CONFIG_EVENTS[which],
    cloudEventType: cloudEventType(`push_config.${which}`, 1),
    publisher: 'tasks',
    summary: deleted ? 'An A2A push-notification config of a task was deleted.' : 'An A2A push-notification config of a task was set (created or replaced).',
    schema: pushConfigEventSchema,
    subjectOf: (event) => event.task_id,
    example: {
      event_id: '5f1d2c3b-4a59-4e6f-8a7b-9c0d1e2f3a4b',
      task_id: '01JD4ZK9M1W7C3V6Q2T8R5Y0XA',
      config_id: 'cfg-1',
      owner: 'bob@acme',
      version: '1.0',
      url: deleted ? null : 'https://hooks.example.com/a2a',
      deleted,
      occurred_at: EXAMPLE_TIME,
    },
  };
}

const AGENT_EVENT_KIND: RelayEventKind<AgentUpdatedEvent> = {
  name: 'agent.updated',
  version: 1,
  subject: AGENT_UPDATED_EVENT_SUBJECT,
  cloudEventType: cloudEventType('agent.updated', 1),
  publisher: 'directory',
  summary: 'An agent was created, updated or disabled: its whole current delivery profile (keep the newest by occurred_at).',
  schema: agentUpdatedEventSchema,
  subjectOf: (event) => event.agent_id,
  example: {
    event_id: '9e8d7c6b-5a49-4c3b-8a2f-1e0d9c8b7a69',
    agent_id: '3c1f7a52-0d4e-4b8a-9f6c-2e5d8a1b7c30',
    handle: 'frank@acme',
    name: 'Frank',
    notification_webhook_url: 'https://hooks.example.com/frank',
    slack_webhook_url: null,
    webhook_timeout_ms: null,
    disabled: false,
    occurred_at: EXAMPLE_TIME,
  },
};

/** Every kind of event the relay publishes, at every version it publishes. */
export const RELAY_EVENT_KINDS: readonly RelayEventKind[] = [
  ...TASK_EVENT_KINDS,
  pushConfigKind('set'),
  pushConfigKind('deleted'),
  AGENT_EVENT_KIND,
] as RelayEventKind[];

const KIND_OF_SUBJECT = new Map(RELAY_EVENT_KINDS.map((kind) => [kind.subject, kind]));
const KIND_OF_TYPE = new Map(RELAY_EVENT_KINDS.map((kind) => [kind.cloudEventType, kind]));

/** The event kind published on an unprefixed subject (the newest version, while two are published). */
export function eventKindOfSubject(subject: string): RelayEventKind | undefined {
  return KIND_OF_SUBJECT.get(subject);
}

/** The event kind of a CloudEvents `type`. */
export function eventKindOfType(type: string): RelayEventKind | undefined {
  return KIND_OF_TYPE.get(type);
}

/** The file name of a kind's JSON Schema: `task.completed.v1.json`. */
export function eventSchemaFileName(kind: Pick<RelayEventKind, 'name' | 'version'>): string {
  return `${kind.name}.v${kind.version}.json`;
}

/** The published URL of a kind's JSON Schema (the CloudEvents `dataschema`). */
export function eventSchemaUrl(publicUrl: string, kind: Pick<RelayEventKind, 'name' | 'version'>): string {
  return `${publicUrl.replace(/\/+$/, '')}${EVENT_SCHEMAS_PATH}/${eventSchemaFileName(kind)}`;
}
