import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Dialect } from '@app/a2a';
import { ERROR_CATALOGUE, httpStatusOf, jsonRpcCode, RelayError, type ErrorSpec } from '@app/contracts';

const logger = new Logger('JsonRpcErrors');

export type JsonRpcId = string | number | null;

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result?: unknown;
  error?: JsonRpcErrorObject;
}

export const A2A_ERROR_DOMAIN = 'a2a-protocol.org';
export const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';

/** A rendered error: the JSON-RPC error object and the HTTP status of the response. */
export interface RenderedError {
  status: number;
  error: JsonRpcErrorObject;
}

/**
 * Turns anything thrown while answering a call into a RelayError. Unknown errors are logged with an
 * id and become `internal_error` carrying only that id.
 */
export function asRelayError(error: unknown): RelayError {
  if (error instanceof RelayError) return error;
  const errorId = randomUUID();
  logger.error({ err: error, error_id: errorId }, 'unhandled error while answering a JSON-RPC call');
  return new RelayError('internal_error', `Internal error (id ${errorId})`, { error_id: errorId });
}

export function stringMetadata(data: Record<string, unknown>): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(data)) {
    if (value === undefined || value === null) continue;
    metadata[key] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return metadata;
}

/** What every A2A client is told about a task it may not see, whether it exists or not. */
export const A2A_TASK_NOT_FOUND_MESSAGE = 'Task not found';

/**
 * In the A2A dialects a task the caller does not take part in and a task that does not exist are
 * one error, rendered identically, so that task ids cannot be probed. The AgentRelay dialect keeps
 * its two codes.
 */
export function withoutExistenceHint(error: RelayError): RelayError {
  if (error.reason !== 'not_a_participant' && error.reason !== 'thread_not_found') return error;
  return new RelayError('thread_not_found', A2A_TASK_NOT_FOUND_MESSAGE);
}

/**
 * The one rendering of a RelayError per dialect:
 * - AgentRelay and A2A v0.3: `{code, message, data: {reason, ...data}}` (for -32602 `data.field` too);
 * - A2A v1.0: `{code, message, data: [google.rpc.ErrorInfo]}`.
 */
export function renderRelayError(relayError: RelayError, dialect: Dialect): RenderedError {
  const error = dialect.kind === 'agentrelay' ? relayError : withoutExistenceHint(relayError);
  const status = httpStatusOf(error.reason);
  const data = error.data ?? {};
  if (dialect.kind === 'agentrelay') {
    return { status, error: { code: jsonRpcCode(error.reason, 'agentrelay'), message: error.message, data: { reason: error.reason, ...data } } };
  }
  const code = jsonRpcCode(error.reason, 'a2a');
  if (dialect.version === '0.3') {
    return { status, error: { code, message: error.message, data: { reason: error.reason, ...data } } };
  }
  const spec: ErrorSpec = ERROR_CATALOGUE[error.reason];
  return {
    status,
    error: {
      code,
      message: error.message,
      data: [
        {
          '@type': ERROR_INFO_TYPE,
          reason: spec.a2aReason ?? error.reason.toUpperCase(),
          domain: A2A_ERROR_DOMAIN,
          metadata: stringMetadata({ relay_reason: error.reason, ...data }),
        },
      ],
    },
  };
}
