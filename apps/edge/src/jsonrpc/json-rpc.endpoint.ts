import { Inject, Injectable, Optional } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { canonicalMethod, chooseDialect, negotiateVersion, type Dialect } from '@app/a2a';
import { RelayError, type AgentIdentity } from '@app/contracts';
import { AgentCallPipeline, setRefusalHeaders, type AgentCallBinding, type PreparedCall } from '../endpoint/agent-call';
import type { SseFraming } from '../endpoint/sse-writer';
import { renderRelayError, type JsonRpcId, type JsonRpcResponse } from '../errors/json-rpc-errors';
import { bindingOf, preliminaryDialect, UnparseableJson } from '../endpoint/http-intake';
import { refusalInTurn, type CallersAtLimit } from '../endpoint/callers-at-limit';
import { findRequestProblem } from '../input/input-guard';
import type { RequestMetrics } from '../metrics/request-metrics';
import { A2A_METHODS, AGENTRELAY_METHODS, type DialectMethods, type MethodCall } from '../methods/dialect-methods';

/** The methods the AgentRelay dialect (docs/dialects.md#agentrelay) answers itself; the rest go to the A2A handlers. */
const AGENTRELAY_CANONICAL = new Set(['send', 'get', 'list', 'update', 'cancel', 'watch', 'search']);

interface Envelope {
  id: JsonRpcId;
  method: string;
  params: Record<string, unknown>;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readableId(body: Record<string, unknown>): JsonRpcId {
  const id = body.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

function readEnvelope(body: unknown): Envelope {
  if (body instanceof UnparseableJson) throw new RelayError('parse_error', `Invalid JSON payload: ${body.detail}`);
  if (!isPlainObject(body)) {
    throw new RelayError('invalid_request', Array.isArray(body) ? 'Batch requests are not supported' : 'The request must be a JSON-RPC 2.0 request object');
  }
  const id = readableId(body);
  const invalid = (message: string, field: string): EnvelopeError => new EnvelopeError(id, message, field);
  if ('id' in body && body.id !== null && typeof body.id !== 'string' && !(typeof body.id === 'number' && Number.isFinite(body.id))) {
    throw invalid('id must be a string, a number or null', 'id');
  }
  if (body.jsonrpc !== '2.0') throw invalid('jsonrpc must be exactly "2.0"', 'jsonrpc');
  if (typeof body.method !== 'string' || body.method.length === 0) throw invalid('method must be a non-empty string', 'method');
  if (body.params !== undefined && body.params !== null && !isPlainObject(body.params)) throw invalid('params must be an object', 'params');
  return { id, method: body.method as string, params: (body.params as Record<string, unknown> | undefined) ?? {} };
}

/**
 * The JSON-RPC binding of the agent endpoints `POST /a2a` and `POST /a2a/{handle}`: the envelope,
 * the version and method, the dialect, dispatch to the dialect's methods, and every answer as a
 * JSON-RPC response. The rest of a call is the AgentCallPipeline's.
 */
@Injectable()
export class JsonRpcEndpoint {
  constructor(
    @Inject(AgentCallPipeline) private readonly pipeline: AgentCallPipeline,
    @Inject(AGENTRELAY_METHODS) private readonly agentRelayMethods: DialectMethods,
    @Optional() @Inject(A2A_METHODS) private readonly a2aMethods?: DialectMethods,
  ) {}

  answer(request: FastifyRequest, reply: FastifyReply, endpointHandle: string | null): Promise<void> {
    return this.pipeline.run(request, reply, new JsonRpcBinding(request, endpointHandle, (call) => this.dispatch(call)));
  }

  private dispatch(call: MethodCall): Promise<unknown> {
    if (call.dialect.kind === 'agentrelay' && AGENTRELAY_CANONICAL.has(call.canonical)) return this.agentRelayMethods.handle(call);
    if (!this.a2aMethods) throw new RelayError('method_not_found', `Method '${call.method}' not found`, { method: call.method });
    return this.a2aMethods.handle(call);
  }
}

/** One JSON-RPC request: its id and dialect are learnt as the envelope is read, and every answer repeats the id. */
class JsonRpcBinding implements AgentCallBinding {
  dialect: Dialect;
  private id: JsonRpcId = null;

  constructor(
    private readonly request: FastifyRequest,
    private readonly endpointHandle: string | null,
    private readonly dispatch: (call: MethodCall) => Promise<unknown>,
  ) {
    this.dialect = preliminaryDialect(request.headers);
  }

  async prepare(admit: () => Promise<AgentIdentity>): Promise<PreparedCall> {
    const headers = this.request.headers;
    let envelope: Envelope;
    try {
      envelope = readEnvelope(this.request.body);
    } catch (error) {
      if (error instanceof EnvelopeError) this.id = error.requestId;
      throw error;
    }
    const id = envelope.id;
    this.id = id;
    const caller = await admit();
    const version = negotiateVersion(headers['a2a-version']);
    if (version === '1.0') this.dialect = { kind: 'a2a', version };
    const canonical = canonicalMethod(envelope.method);
    if (!canonical) throw new RelayError('method_not_found', `Method '${envelope.method}' not found`, { method: envelope.method });
    const dialect = chooseDialect(version, canonical, envelope.params, envelope.method);
    this.dialect = dialect;
    const call: MethodCall = {
      id,
      method: envelope.method,
      canonical,
      params: envelope.params,
      dialect,
      caller,
      endpointHandle: this.endpointHandle,
      headers,
    };
    return { caller, canonical, dialect, execute: () => this.dispatch(call), framing: framing(id, dialect) };
  }

  sendResult(reply: FastifyReply, result: unknown): void {
    send(reply, { jsonrpc: '2.0', id: this.id, result }, 200);
  }

  sendError(reply: FastifyReply, error: RelayError, streaming: boolean): void {
    const rendered = renderRelayError(error, this.dialect);
    const body: JsonRpcResponse = { jsonrpc: '2.0', id: this.id, error: rendered.error };
    if (streaming && rendered.status === 200 && this.dialect.kind === 'a2a' && this.dialect.version === '0.3') {
      streamError(reply, body);
      return;
    }
    setRefusalHeaders(reply, error);
    send(reply, body, rendered.status);
  }
}

/** Each stream item is the `result` of a whole JSON-RPC response repeating the request id. */
function framing(id: JsonRpcId, dialect: Dialect): SseFraming {
  return {
    event: (result): JsonRpcResponse => ({ jsonrpc: '2.0', id, result }),
    error: (error): JsonRpcResponse => ({ jsonrpc: '2.0', id, error: renderRelayError(error, dialect).error }),
  };
}

/**
 * A v0.3 streaming call's error (docs/dialects.md#streams): v0.3 clients read only an event
 * stream there, so it is one `event: error` carrying the JSON-RPC error response.
 */
function streamError(reply: FastifyReply, body: JsonRpcResponse): void {
  reply
    .code(200)
    .header('content-type', 'text/event-stream')
    .header('cache-control', 'no-cache')
    .send(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
}

/**
 * Answers a JSON-RPC call whose key is known to be at its limit (CallersAtLimit) from its raw body,
 * before it is parsed for the route, authenticated or looked up: the refusal the whole path would
 * give (in the version header's dialect, the request's id repeated, the same headers and metrics).
 * False, leaving the call to the whole path, when the key is not known so or the body has an error
 * of its own, which the whole path answers first.
 */
export async function answerKnownRefusal(
  atLimit: CallersAtLimit,
  metrics: RequestMetrics,
  request: FastifyRequest,
  reply: FastifyReply,
  body: Buffer | undefined,
): Promise<boolean> {
  if (bindingOf(request) !== 'json-rpc' || body === undefined || !atLimit.knows(request.headers)) return false;
  let envelope: Envelope;
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (findRequestProblem({ method: request.method, params: request.params, query: request.query, body: parsed, routeOptions: request.routeOptions }))
      return false;
    envelope = readEnvelope(parsed);
  } catch {
    return false;
  }
  const known = atLimit.refusalFor(request.headers);
  if (known === undefined) return false;
  const error = await refusalInTurn(known, reply);
  if (error === undefined) return true;
  const dialect = preliminaryDialect(request.headers);
  metrics.failed(request, dialect, error.reason);
  setRefusalHeaders(reply, error);
  const rendered = renderRelayError(error, dialect);
  send(reply, { jsonrpc: '2.0', id: envelope.id, error: rendered.error }, rendered.status);
  return true;
}

function send(reply: FastifyReply, body: JsonRpcResponse, status: number): void {
  reply.code(status).header('content-type', 'application/json; charset=utf-8').send(body);
}

/** An invalid envelope whose id could still be read. */
class EnvelopeError extends RelayError {
  constructor(
    readonly requestId: JsonRpcId,
    message: string,
    field: string,
  ) {
    super('invalid_request', message, { field });
  }
}
