import type { CanonicalMethod, Dialect } from '@app/a2a';
import type { AgentIdentity } from '@app/contracts';

/** One authenticated JSON-RPC call, its dialect decided, ready for a dialect's method handlers. */
export interface JsonRpcCall {
  id: string | number | null;
  method: string;
  canonical: CanonicalMethod;
  params: Record<string, unknown>;
  dialect: Dialect;
  caller: AgentIdentity;
  /** The {handle} of POST /a2a/{handle}, or null on POST /a2a. */
  endpointHandle: string | null;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * A result answered as a Server-Sent Events stream instead of one JSON body: each item is sent as
 * the `result` of one JSON-RPC response event, with the item's `id` as the SSE id. `open` gets a
 * signal that aborts when the client goes away; the iterable must then stop (and release what it holds).
 */
export { EventStream as JsonRpcEventStream } from '../streams/task-streams';

/** The method handlers of one dialect. */
export interface DialectMethods {
  /** Returns the JSON-RPC result (or a JsonRpcEventStream); throws a RelayError for a JSON-RPC error. */
  handle(call: JsonRpcCall): Promise<unknown>;
}

export const AGENTRELAY_METHODS = Symbol('AGENTRELAY_METHODS');
export const A2A_METHODS = Symbol('A2A_METHODS');

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
