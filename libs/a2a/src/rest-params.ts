import { RelayError } from '@app/contracts';
import { invalidParams, isRecord } from './parse';

/**
 * The HTTP+JSON binding's requests as the params object of the same JSON-RPC method, so that one
 * set of parsers (params.ts, push-config.ts) reads both bindings: the path names the task (and
 * config), the query string carries the scalars of GetTask and ListTasks, the body the rest.
 */

/** The query fields of ListTasks and GetTask that are booleans (`true` / `false` on the wire). */
const BOOLEAN_QUERY_FIELDS = new Set(['includeArtifacts', 'include_artifacts']);

/** A query string as params: one value per field, booleans read from `true` / `false`. */
export function queryParams(query: Record<string, unknown> | undefined): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(query ?? {})) {
    if (Array.isArray(value)) throw invalidParams(key, 'must be given once');
    if (BOOLEAN_QUERY_FIELDS.has(key)) {
      if (value !== 'true' && value !== 'false') throw invalidParams(key, 'must be true or false');
      params[key] = value === 'true';
    } else {
      params[key] = value;
    }
  }
  return params;
}

/** A request body that must be a JSON object (SendMessage, CreateTaskPushNotificationConfig). */
export function objectBody(body: unknown): Record<string, unknown> {
  if (!isRecord(body)) throw new RelayError('invalid_params', 'The request body must be a JSON object', { field: 'body' });
  return body;
}

/** A request body that may be left out (CancelTask, SubscribeToTask). */
export function optionalObjectBody(body: unknown): Record<string, unknown> {
  return body === undefined || body === null ? {} : objectBody(body);
}

/** `{id}:cancel` → `{id, verb: 'cancel'}`; a segment without a verb has `verb` undefined. */
export function taskTarget(segment: string): { id: string; verb?: string } {
  const colon = segment.lastIndexOf(':');
  return colon < 0 ? { id: segment } : { id: segment.slice(0, colon), verb: segment.slice(colon + 1) };
}
