import {
  CLOUD_EVENT_HEADER_PREFIX,
  CLOUD_EVENTS_SPEC_VERSION,
  cloudEventAttributes,
  cloudEventHeaders,
  EVENT_DATA_CONTENT_TYPE,
  eventJsonSchema,
  eventSchemaUrl,
  prefixedSubject,
  RELAY_EVENT_KINDS,
  TASK_EVENT_POSITION_HEADER,
  type RelayEventKind,
} from '@app/contracts';
import { REQUEST_ID_HEADER } from '@app/logging';
import { TRACEPARENT_HEADER } from '@app/tracing';
import { EVENT_DUPLICATE_WINDOW_MS, EVENT_STREAM_MAX_AGE_MS, eventStreamName, eventStreamSubjects } from './jetstream';

/** The version of the AsyncAPI document itself: the events' versions are in their CloudEvents types. */
export const EVENTS_ASYNCAPI_VERSION = '1.0.0';

/** The RELAY_PUBLIC_URL the checked-in documents are written for (the default one). */
export const DEFAULT_EVENTS_PUBLIC_URL = 'http://127.0.0.1:8080';

export interface EventDocumentOptions {
  /** RELAY_PUBLIC_URL: the CloudEvents `source`, and where the schemas are served. */
  publicUrl: string;
  /** NATS_SUBJECT_PREFIX: put in front of every channel address and names the stream. */
  subjectPrefix: string;
}

/** `task.message_appended` → `taskMessageAppended`: an AsyncAPI component key. */
function key(kind: RelayEventKind, suffix = ''): string {
  const camel = kind.name.replace(/[._]([a-z])/g, (_, letter: string) => letter.toUpperCase());
  return `${camel}${suffix}`;
}

function headersSchema(kind: RelayEventKind): Record<string, unknown> {
  const ce = (name: string, description: string, extra: Record<string, unknown> = {}): [string, Record<string, unknown>] => [
    `${CLOUD_EVENT_HEADER_PREFIX}${name}`,
    { type: 'string', description, ...extra },
  ];
  const properties = Object.fromEntries([
    ce('specversion', 'CloudEvents version.', { const: CLOUD_EVENTS_SPEC_VERSION }),
    ce('id', 'The event id (= the payload’s event_id and the Nats-Msg-Id).'),
    ce('source', 'The relay’s URI (RELAY_PUBLIC_URL).'),
    ce('type', 'The CloudEvents type.', { const: kind.cloudEventType }),
    ce('subject', kind.publisher === 'directory' ? 'The agent id.' : 'The task id.'),
    ce('time', 'The time of the change (= occurred_at), RFC 3339.'),
    ce('datacontenttype', 'The media type of the body.', { const: EVENT_DATA_CONTENT_TYPE }),
    ce('dataschema', 'The URL of this payload’s JSON Schema.'),
    ['Nats-Msg-Id', { type: 'string', description: 'The event id: JetStream drops a re-published duplicate within its window.' }],
    ...(kind.publisher === 'tasks'
      ? [
          [
            TASK_EVENT_POSITION_HEADER,
            { type: 'string', pattern: '^[0-9]+$', description: 'The event’s position in the tasks outbox (orders one task’s events).' },
          ],
        ]
      : []),
    [
      TRACEPARENT_HEADER,
      {
        type: 'string',
        description:
          kind.publisher === 'tasks'
            ? 'W3C trace context: of a task event, its handoff’s (the trace of its chain, on every task event); of another event, the request that caused it, when traced.'
            : 'W3C trace context of the request that caused the event, when traced.',
      },
    ],
    [REQUEST_ID_HEADER, { type: 'string', description: 'The HTTP request id that caused the event, when there was one.' }],
  ]);
  const required = ['specversion', 'id', 'source', 'type', 'subject', 'time', 'datacontenttype', 'dataschema'].map(
    (name) => `${CLOUD_EVENT_HEADER_PREFIX}${name}`,
  );
  return { type: 'object', properties, required: [...required, 'Nats-Msg-Id'] };
}

function exampleHeaders(kind: RelayEventKind, publicUrl: string): Record<string, string> {
  const payload = kind.example as { event_id: string; occurred_at: string };
  return {
    ...cloudEventHeaders(cloudEventAttributes(kind as RelayEventKind<typeof payload>, payload, publicUrl)),
    'Nats-Msg-Id': payload.event_id,
    ...(kind.publisher === 'tasks' ? { [TASK_EVENT_POSITION_HEADER]: '1042' } : {}),
  };
}

/**
 * The AsyncAPI 3.0 document of the relay's NATS interface for event consumers: the relay sends
 * every event kind of `RELAY_EVENT_KINDS` on its subject of the event stream, as a CloudEvent in
 * binary content mode. Made from the same table as the JSON Schemas and the headers the services
 * publish with, so it cannot tell another story.
 */
export function eventAsyncApiDocument(options: EventDocumentOptions): Record<string, unknown> {
  const stream = eventStreamName(options.subjectPrefix);
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const messages: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  for (const kind of RELAY_EVENT_KINDS) {
    const channel = key(kind);
    const message = key(kind, `V${kind.version}`);
    const { $schema: _dialect, ...schema } = eventJsonSchema(kind, eventSchemaUrl(options.publicUrl, kind));
    schemas[message] = schema;
    messages[message] = {
      name: kind.cloudEventType,
      title: kind.name,
      summary: kind.summary,
      contentType: EVENT_DATA_CONTENT_TYPE,
      headers: headersSchema(kind),
      payload: { $ref: `#/components/schemas/${message}` },
      correlationId: { description: 'The event id.', location: '$message.header#/ce-id' },
      examples: [{ name: kind.name, headers: exampleHeaders(kind, options.publicUrl), payload: kind.example }],
    };
    channels[channel] = {
      address: prefixedSubject(options.subjectPrefix, kind.subject),
      title: kind.subject,
      description: `${kind.summary} Published by the ${kind.publisher} service, captured by the JetStream stream ${stream}.`,
      messages: { [message]: { $ref: `#/components/messages/${message}` } },
    };
    operations[`send${channel[0].toUpperCase()}${channel.slice(1)}`] = {
      action: 'send',
      channel: { $ref: `#/channels/${channel}` },
      summary: `The ${kind.publisher} service publishes ${kind.name} through its transactional outbox.`,
      messages: [{ $ref: `#/channels/${channel}/messages/${message}` }],
    };
  }
  const days = EVENT_STREAM_MAX_AGE_MS / 86_400_000;
  const windowMinutes = EVENT_DUPLICATE_WINDOW_MS / 60_000;
  return {
    asyncapi: '3.0.0',
    id: 'urn:dev:agentrelay:events',
    info: {
      title: 'AgentRelay events',
      version: EVENTS_ASYNCAPI_VERSION,
      description: [
        'The events the relay publishes on NATS JetStream for internal services: task events, push-config events and agent events.',
        '',
        `Every event is a CloudEvent ${CLOUD_EVENTS_SPEC_VERSION} in binary content mode (NATS protocol binding): the attributes are \`ce-\` headers, the body is the JSON payload.`,
        `The stream \`${stream}\` captures \`${eventStreamSubjects(options.subjectPrefix).join(', ')}\` (file storage, limits retention, ${days} days, duplicate window ${windowMinutes} minutes).`,
        'Delivery is at least once (key on the event id) and in order per task. Read it through a durable consumer of your own, with the credential your operator made for it (`npm run nats:credentials -- --consumer <name>`).',
        'Versioning: within a version fields may be added (ignore what you do not know); any other change is a new type version, published beside the old one for a window announced in docs/events.md.',
      ].join('\n'),
    },
    defaultContentType: EVENT_DATA_CONTENT_TYPE,
    servers: {
      nats: {
        host: '{host}',
        protocol: 'nats',
        description: 'The deployment’s NATS (NATS_URL), with JetStream; an event consumer connects with its own read-only credential.',
        variables: { host: { default: '127.0.0.1:4222', description: 'host:port of a NATS server of the deployment' } },
      },
    },
    channels,
    operations,
    components: { messages, schemas },
  };
}
