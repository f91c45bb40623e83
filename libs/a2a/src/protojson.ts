/**
 * ProtoJSON parsers accept both the lowerCamelCase JSON name of a field and its original proto
 * snake_case name (`historyLength` and `history_length`). The relay normalizes every incoming A2A
 * params object to camelCase once, before reading it.
 */

/** Keys whose values belong to the client (free-form JSON): they are never rewritten. */
const OPAQUE_KEYS = new Set(['metadata', 'data', 'payload']);

export function snakeToCamel(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

/**
 * Returns a copy of `value` with every snake_case object key turned into camelCase, recursively,
 * except inside client-owned maps (`metadata`, `data`, `payload`). When both spellings of a field
 * are present, the camelCase one wins.
 */
export function normalizeProtoJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => normalizeProtoJson(item));
  if (typeof value !== 'object' || value === null) return value;
  const source = value as Record<string, unknown>;
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(source)) {
    const camel = snakeToCamel(key);
    if (camel !== key && Object.prototype.hasOwnProperty.call(source, camel)) continue;
    result[camel] = OPAQUE_KEYS.has(camel) ? item : normalizeProtoJson(item);
  }
  return result;
}
