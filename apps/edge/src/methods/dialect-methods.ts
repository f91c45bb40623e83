import type { CanonicalMethod, Dialect } from '@app/a2a';
import type { AgentIdentity } from '@app/contracts';

/** One authenticated call to an agent endpoint (JSON-RPC, or HTTP+JSON made into the same shape), its dialect decided, ready for a dialect's method handlers. */
export interface MethodCall {
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

/** The method handlers of one dialect. */
export interface DialectMethods {
  /** Returns the JSON-RPC result (or an EventStream, answered as Server-Sent Events); throws a RelayError for a JSON-RPC error. */
  handle(call: MethodCall): Promise<unknown>;
}

export const AGENTRELAY_METHODS = Symbol('AGENTRELAY_METHODS');
export const A2A_METHODS = Symbol('A2A_METHODS');
