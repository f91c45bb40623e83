import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { canonicalMethod, chooseDialect, negotiateVersion, type Dialect } from '@app/a2a';
import { RelayError, retryAfterSeconds } from '@app/contracts';
import { annotateRpcError, annotateRpcMethod } from '@app/tracing';
import { CallerGate } from '../endpoint/caller-gate';
import { SseWriter, type SseFraming } from '../endpoint/sse-writer';
import { RequestMetrics } from '../metrics/request-metrics';
import { asRelayError, renderRelayError } from './json-rpc-errors';
import { EventStream } from '../streams/task-streams';
import { preliminaryDialect, UnparseableJson } from './json-rpc.http';
import { A2A_METHODS, AGENTRELAY_METHODS, type DialectMethods, type JsonRpcCall, type JsonRpcId, type JsonRpcResponse } from './json-rpc.types';
import { bearerChallenge } from '../auth/token-verifier';

/** The methods the AgentRelay dialect (docs/dialects.md#agentrelay) answers itself; the rest go to the A2A handlers. */
const AGENTRELAY_CANONICAL = new Set(['send', 'get', 'list', 'update', 'cancel', 'watch', 'search']);

/** The methods answered with a stream, which hold a connection open: RELAY_STREAMS_PER_AGENT bounds them. */
const STREAMING_CANONICAL = new Set(['stream', 'resubscribe', 'watch']);

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

/**
 * One JSON-RPC call from the HTTP request to the reply: envelope, authentication, rate limit,
 * version and method, dialect, dispatch, and one rendering of every error.
 */
@Injectable()
export class JsonRpcEndpoint {
  private readonly logger = new Logger(JsonRpcEndpoint.name);

  constructor(
    @Inject(CallerGate) private readonly gate: CallerGate,
    @Inject(SseWriter) private readonly sse: SseWriter,
    @Inject(RequestMetrics) private readonly metrics: RequestMetrics,
    @Inject(AGENTRELAY_METHODS) private readonly agentRelayMethods: DialectMethods,
    @Optional() @Inject(A2A_METHODS) private readonly a2aMethods?: DialectMethods,
  ) {}

  async answer(request: FastifyRequest, reply: FastifyReply, endpointHandle: string | null): Promise<void> {
    const headers = request.headers;
    let id: JsonRpcId = null;
    let dialect: Dialect = preliminaryDialect(headers);
    let streaming = false;
    try {
      const envelope = this.readEnvelope(request.body);
      id = envelope.id;
      const caller = await this.gate.admit(request, reply);
      const version = negotiateVersion(headers['a2a-version']);
      dialect = version === '1.0' ? { kind: 'a2a', version } : dialect;
      const canonical = canonicalMethod(envelope.method);
      if (!canonical) throw new RelayError('method_not_found', `Method '${envelope.method}' not found`, { method: envelope.method });
      dialect = chooseDialect(version, canonical, envelope.params, envelope.method);
      streaming = STREAMING_CANONICAL.has(canonical);
      this.metrics.identify(request, canonical, dialect);
      annotateRpcMethod(canonical, dialect.kind);
      const call: JsonRpcCall = { id, method: envelope.method, canonical, params: envelope.params, dialect, caller, endpointHandle, headers };
      // Reserved before the method runs: a send refused for want of a slot has not been sent.
      const releaseStreamSlot = STREAMING_CANONICAL.has(canonical) ? this.sse.reserveSlot(caller) : undefined;
      try {
        const result = await this.dispatch(call);
        if (reply.sent) {
          if (result instanceof EventStream) result.release();
          return;
        }
        if (result instanceof EventStream) {
          await this.sse.write(reply, result, this.framing(id, dialect), releaseStreamSlot);
          return;
        }
        this.send(reply, { jsonrpc: '2.0', id, result }, 200);
      } finally {
        releaseStreamSlot?.();
      }
    } catch (error) {
      if (reply.sent) {
        this.logger.warn({ err: error }, 'error after the reply was sent');
        return;
      }
      if (error instanceof EnvelopeError) id = error.requestId;
      const relayError = asRelayError(error);
      this.metrics.failed(request, dialect, relayError.reason);
      annotateRpcError(relayError.reason);
      const rendered = renderRelayError(relayError, dialect);
      if (streaming && rendered.status === 200 && dialect.kind === 'a2a' && dialect.version === '0.3') {
        this.streamError(reply, { jsonrpc: '2.0', id, error: rendered.error });
        return;
      }
      if (relayError.reason === 'unauthenticated') reply.header('www-authenticate', bearerChallenge(relayError));
      const retryAfter = retryAfterSeconds(relayError);
      if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
      this.send(reply, { jsonrpc: '2.0', id, error: rendered.error }, rendered.status);
    }
  }

  private readEnvelope(body: unknown): Envelope {
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

  private dispatch(call: JsonRpcCall): Promise<unknown> {
    if (call.dialect.kind === 'agentrelay' && AGENTRELAY_CANONICAL.has(call.canonical)) return this.agentRelayMethods.handle(call);
    if (!this.a2aMethods) throw new RelayError('method_not_found', `Method '${call.method}' not found`, { method: call.method });
    return this.a2aMethods.handle(call);
  }

  /** Each stream item is the `result` of a whole JSON-RPC response repeating the request id. */
  private framing(id: JsonRpcId, dialect: Dialect): SseFraming {
    return {
      event: (result): JsonRpcResponse => ({ jsonrpc: '2.0', id, result }),
      error: (error): JsonRpcResponse => ({ jsonrpc: '2.0', id, error: renderRelayError(error, dialect).error }),
    };
  }

  /**
   * A v0.3 streaming call's error (docs/dialects.md#streams): v0.3 clients read only an event
   * stream there, so it is one `event: error` carrying the JSON-RPC error response.
   */
  private streamError(reply: FastifyReply, body: JsonRpcResponse): void {
    reply
      .code(200)
      .header('content-type', 'text/event-stream')
      .header('cache-control', 'no-cache')
      .send(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
  }

  private send(reply: FastifyReply, body: JsonRpcResponse, status: number): void {
    reply.code(status).header('content-type', 'application/json; charset=utf-8').send(body);
  }
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
