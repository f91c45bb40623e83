import type { CanonicalMethod } from '@app/a2a';
import type { AgentIdentity, WireVersion } from '@app/contracts';

/**
 * One standard A2A operation, whatever binding carried it (JSON-RPC or HTTP+JSON): who calls,
 * on which endpoint, the params as a JSON-RPC `params` object would hold them, and the wire
 * version to answer in. The bindings build it and render what it returns; the methods never see
 * the binding.
 */
export interface A2aCommand {
  /** The operation as the client named it (`SendMessage`, `message/send`, `POST /message:send`), for error messages. */
  method: string;
  canonical: CanonicalMethod;
  params: Record<string, unknown>;
  version: WireVersion;
  caller: AgentIdentity;
  /** The {handle} of the agent endpoint, or null on the relay endpoint `POST /a2a`. */
  endpointHandle: string | null;
  /** The `Last-Event-ID` header of a stream request, handed to the stream entry points. */
  lastEventId?: string;
  /** The trace id of the request's `traceparent` header: a new task that names no parent may serve the handoff of that trace (docs/chains.md). */
  callerTraceId?: string;
}
