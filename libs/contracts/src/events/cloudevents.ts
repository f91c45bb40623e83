import { eventKindOfSubject, eventKindOfType, eventSchemaUrl, type RelayEventKind } from './event-catalog';

/** The CloudEvents version of the relay's events. */
export const CLOUD_EVENTS_SPEC_VERSION = '1.0';

/** The media type of every event's data (the NATS message body). */
export const EVENT_DATA_CONTENT_TYPE = 'application/json';

/** The prefix of the NATS headers that carry CloudEvents attributes in binary content mode. */
export const CLOUD_EVENT_HEADER_PREFIX = 'ce-';

/** The CloudEvents context attributes of one relay event. */
export interface CloudEventAttributes {
  specversion: string;
  id: string;
  source: string;
  type: string;
  subject?: string;
  time?: string;
  datacontenttype?: string;
  dataschema?: string;
}

const UTF8 = new TextEncoder();

/** Printable ASCII (U+0021-U+007E) but `"` and `%`. */
const NOTHING_TO_ENCODE = /^[\x21\x23\x24\x26-\x7e]*$/;

const ATTRIBUTES = ['specversion', 'id', 'source', 'type', 'subject', 'time', 'datacontenttype', 'dataschema'] as const;

/**
 * Percent-encodes a header value as the CloudEvents NATS binding asks: space, double quote, percent
 * and every character outside printable ASCII, as the UTF-8 bytes of the character.
 */
export function encodeCloudEventHeaderValue(value: string): string {
  // Ids, URIs, types and times are printable ASCII without a space, quote or percent: as they are.
  if (NOTHING_TO_ENCODE.test(value)) return value;
  let encoded = '';
  for (const character of value) {
    const code = character.codePointAt(0)!;
    if (code > 0x20 && code < 0x7f && character !== '"' && character !== '%') encoded += character;
    else for (const byte of UTF8.encode(character)) encoded += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

/** Undoes `encodeCloudEventHeaderValue` (and a value in double quotes, as older senders wrote them); throws on invalid UTF-8. */
export function decodeCloudEventHeaderValue(value: string): string {
  let text = value.trim();
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) text = text.slice(1, -1).replace(/\\(.)/g, '$1');
  if (!text.includes('%')) return text;
  const bytes: number[] = [];
  for (let index = 0; index < text.length; index++) {
    if (text[index] === '%' && /^[0-9A-Fa-f]{2}$/.test(text.slice(index + 1, index + 3))) {
      bytes.push(parseInt(text.slice(index + 1, index + 3), 16));
      index += 2;
    } else {
      bytes.push(...UTF8.encode(text[index]));
    }
  }
  return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
}

/** The CloudEvents attributes of an event of `kind` published by the relay at `publicUrl` (its `source`). */
export function cloudEventAttributes<Payload extends { event_id: string; occurred_at: string }>(
  kind: RelayEventKind<Payload>,
  payload: Payload,
  publicUrl: string,
): CloudEventAttributes {
  return {
    specversion: CLOUD_EVENTS_SPEC_VERSION,
    id: payload.event_id,
    source: publicUrl.replace(/\/+$/, ''),
    type: kind.cloudEventType,
    subject: kind.subjectOf(payload),
    time: payload.occurred_at,
    datacontenttype: EVENT_DATA_CONTENT_TYPE,
    dataschema: eventSchemaUrl(publicUrl, kind),
  };
}

/** The attributes as NATS headers (binary content mode): `ce-<attribute>`, values percent-encoded. */
export function cloudEventHeaders(attributes: CloudEventAttributes): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of ATTRIBUTES) {
    const value = attributes[name];
    if (value !== undefined) headers[`${CLOUD_EVENT_HEADER_PREFIX}${name}`] = encodeCloudEventHeaderValue(value);
  }
  return headers;
}

/**
 * Reads the CloudEvents attributes of a NATS message in binary content mode (`get` reads one header,
 * case-insensitively); null when it has none (an event published before the relay sent them).
 */
export function readCloudEventHeaders(get: (name: string) => string | undefined): CloudEventAttributes | null {
  const read = (name: string): string | undefined => {
    const value = get(`${CLOUD_EVENT_HEADER_PREFIX}${name}`);
    return value === undefined || value === '' ? undefined : decodeCloudEventHeaderValue(value);
  };
  const specversion = read('specversion');
  const id = read('id');
  const source = read('source');
  const type = read('type');
  if (!specversion || !id || !source || !type) return null;
  return {
    specversion,
    id,
    source,
    type,
    subject: read('subject'),
    time: read('time'),
    datacontenttype: read('datacontenttype'),
    dataschema: read('dataschema'),
  };
}

/** Whether `type` is one of the relay's event types. */
export function isRelayCloudEventType(type: string): boolean {
  return eventKindOfType(type) !== undefined;
}

/**
 * The `ce-` headers of an event the relay publishes on `subject` (unprefixed), made from its catalog
 * entry and payload; none for a subject the catalog does not know (nothing of the relay's).
 */
export function relayEventCloudEventHeaders(subject: string, payload: unknown, publicUrl: string): Record<string, string> {
  const kind = eventKindOfSubject(subject);
  const event = payload as { event_id?: unknown; occurred_at?: unknown } | null;
  if (!kind || typeof event?.event_id !== 'string' || typeof event.occurred_at !== 'string') return {};
  return cloudEventHeaders(
    cloudEventAttributes(kind as RelayEventKind<{ event_id: string; occurred_at: string }>, event as { event_id: string; occurred_at: string }, publicUrl),
  );
}
