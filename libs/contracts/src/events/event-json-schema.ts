import { z } from 'zod';
import type { RelayEventKind } from './event-catalog';

/** The JSON Schema dialect of the published event schemas (the one AsyncAPI 3.0 documents embed). */
export const EVENT_JSON_SCHEMA_DIALECT = 'http://json-schema.org/draft-07/schema#';

/**
 * The JSON Schema of one event kind's payload, made from its zod description. Objects do not
 * forbid other properties: within a version fields may be added, and readers ignore what they do
 * not know (docs/events.md#versioning). `id`, when given, is the schema's published URL.
 */
export function eventJsonSchema(kind: RelayEventKind, id?: string): Record<string, unknown> {
  const generated = z.toJSONSchema(kind.schema, { target: 'draft-7', io: 'input' }) as Record<string, unknown>;
  const { $schema: _dialect, title: _title, description: _description, ...rest } = generated;
  return {
    $schema: EVENT_JSON_SCHEMA_DIALECT,
    ...(id ? { $id: id } : {}),
    title: `${kind.cloudEventType}`,
    description: kind.summary,
    ...rest,
    examples: [kind.example],
  };
}
