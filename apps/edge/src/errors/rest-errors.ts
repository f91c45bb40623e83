import type { FastifyReply } from 'fastify';
import { ERROR_CATALOGUE, httpStatusOf, jsonRpcCode, type ErrorSymbol, type RelayError } from '@app/contracts';
import { A2A_ERROR_DOMAIN, ERROR_INFO_TYPE, renderRelayError, stringMetadata, withoutExistenceHint } from './json-rpc-errors';

export const BAD_REQUEST_TYPE = 'type.googleapis.com/google.rpc.BadRequest';

/** The HTTP+JSON error body: a `google.rpc.Status` under `error` (AIP-193). */
export interface RestErrorBody {
  error: {
    code: number;
    status: string;
    message: string;
    details: Array<Record<string, unknown>>;
  };
}

export interface RenderedRestError {
  status: number;
  body: RestErrorBody;
}

/** The HTTP status of the A2A errors (A2A v1.0 §5.4), by the relay's symbols that render as them. */
const A2A_HTTP_STATUS: Partial<Record<ErrorSymbol, number>> = {
  thread_not_found: 404,
  not_a_participant: 404,
  push_config_not_found: 404,
  task_not_cancelable: 409,
  unsupported_media_type: 415,
  method_not_found: 404,
  teammate_blocked: 403,
  blocking_timeout: 504,
  chain_depth_exceeded: 409,
  chain_cycle: 409,
  chain_budget_exhausted: 409,
};

/** The `google.rpc.Code` name of each HTTP status the relay answers (AIP-193 mapping). */
const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  415: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  502: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** A2A errors whose gRPC code is not the HTTP status's default one (A2A v1.0 §5.4). */
const A2A_STATUS_NAMES: Partial<Record<ErrorSymbol, string>> = {
  task_not_cancelable: 'FAILED_PRECONDITION',
  unsupported_operation: 'UNIMPLEMENTED',
  thread_terminal: 'FAILED_PRECONDITION',
  invalid_transition: 'FAILED_PRECONDITION',
  not_authorized_transition: 'FAILED_PRECONDITION',
  state_changed: 'ABORTED',
  thread_message_limit: 'FAILED_PRECONDITION',
  context_limit_reached: 'FAILED_PRECONDITION',
  chain_depth_exceeded: 'FAILED_PRECONDITION',
  chain_cycle: 'FAILED_PRECONDITION',
  chain_budget_exhausted: 'FAILED_PRECONDITION',
  push_notification_not_supported: 'UNIMPLEMENTED',
  version_not_supported: 'UNIMPLEMENTED',
};

export function restHttpStatus(reason: ErrorSymbol): number {
  const mapped = A2A_HTTP_STATUS[reason];
  if (mapped !== undefined) return mapped;
  const status = httpStatusOf(reason);
  // Every other error the catalogue answers with 200 on JSON-RPC is a request the client must change.
  return status === 200 ? 400 : status;
}

/**
 * The one rendering of a RelayError on the HTTP+JSON binding: the HTTP status of A2A v1.0 §5.4,
 * and a `google.rpc.Status` body carrying a `google.rpc.ErrorInfo` (and, for a bad field, a
 * `google.rpc.BadRequest` naming it). A task the caller may not see is "not found", as on JSON-RPC.
 */
export function renderRestError(relayError: RelayError): RenderedRestError {
  const error = withoutExistenceHint(relayError);
  const status = restHttpStatus(error.reason);
  const data = error.data ?? {};
  const spec = ERROR_CATALOGUE[error.reason] as { a2aReason?: string };
  const details: Array<Record<string, unknown>> = [
    {
      '@type': ERROR_INFO_TYPE,
      reason: spec.a2aReason ?? error.reason.toUpperCase(),
      domain: A2A_ERROR_DOMAIN,
      metadata: stringMetadata({ relay_reason: error.reason, relay_code: jsonRpcCode(error.reason, 'a2a'), ...data }),
    },
  ];
  if (error.reason === 'invalid_params' && typeof data.field === 'string') {
    details.push({ '@type': BAD_REQUEST_TYPE, fieldViolations: [{ field: data.field, description: error.message }] });
  }
  return {
    status,
    body: { error: { code: status, status: A2A_STATUS_NAMES[error.reason] ?? STATUS_NAMES[status] ?? 'UNKNOWN', message: error.message, details } },
  };
}

/** Answers an HTTP+JSON call with the error (also before its controller runs: content type, size, input guard). */
export function sendRestError(reply: FastifyReply, error: RelayError): void {
  const rendered = renderRestError(error);
  reply.code(rendered.status).header('content-type', 'application/json; charset=utf-8').send(rendered.body);
}

/**
 * The v0.3 HTTP+JSON binding's error (`/v1/…`): the v0.3 JSON-RPC error object `{code, message,
 * data}` as the body, with the same HTTP status as v1.0.
 */
export function sendLegacyRestError(reply: FastifyReply, error: RelayError): void {
  const rendered = renderRelayError(error, { kind: 'a2a', version: '0.3' });
  reply
    .code(restHttpStatus(withoutExistenceHint(error).reason))
    .header('content-type', 'application/json; charset=utf-8')
    .send(rendered.error);
}

/** An error answered before an HTTP+JSON route runs, in the body of the route's version (`/v1/…` is v0.3). */
export function sendRestErrorForPath(url: string, reply: FastifyReply, error: RelayError): void {
  if (/^\/a2a\/[^/]+\/v1\//.test(url.split('?')[0])) sendLegacyRestError(reply, error);
  else sendRestError(reply, error);
}
