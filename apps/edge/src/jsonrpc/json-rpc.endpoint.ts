import { Inject, Injectable, Logger, type OnModuleDestroy, Optional } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { canonicalMethod, chooseDialect, negotiateVersion, type Dialect } from '@app/a2a';
import { RelayError, retryAfterSeconds, type AgentIdentity } from '@app/contracts';
import { annotateRpcError, annotateRpcMethod } from '@app/tracing';
import { AgentAuthenticator } from '../auth/agent-authenticator';
import { EdgeConfig } from '../edge.config';
import { RequestMetrics } from '../metrics/request-metrics';
import { RateLimiter } from '../rate-limit/rate-limiter';
import { asRelayError, renderRelayError } from './json-rpc-errors';
import { preliminaryDialect, UnparseableJson } from './json-rpc.http';
import {
  A2A_METHODS,
  AGENTRELAY_METHODS,
  JsonRpcEventStream,
  type DialectMethods,
  type JsonRpcCall,
  type JsonRpcId,
  type JsonRpcResponse,
} from './json-rpc.types';

/** An SSE comment line sent on an idle stream, so that proxies and clients keep it open. */
export const SSE_KEEP_ALIVE_MS = 15000;

/** The methods the AgentRelay dialect (docs/dialects.md#agentrelay) answers itself; the rest go to the A2A handlers. */
const AGENTRELAY_CANONICAL = new Set(['send', 'get', 'list', 'update', 'cancel', 'watch']);

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
export class JsonRpcEndpoint implements OnModuleDestroy {
  private readonly logger = new Logger(JsonRpcEndpoint.name);
  /** The open SSE streams; shutting down ends them (a stream would otherwise hold the server open). */
  private readonly streams = new Set<AbortController>();
  /** Open (or opening) streams per agent id. */
  private readonly streamsPerAgent = new Map<string, number>();

  constructor(
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
    @Inject(AgentAuthenticator) private readonly authenticator: AgentAuthenticator,
    @Inject(RateLimiter) private readonly rateLimiter: RateLimiter,
    @Inject(RequestMetrics) private readonly metrics: RequestMetrics,
    @Inject(AGENTRELAY_METHODS) private readonly agentRelayMethods: DialectMethods,
    @Optional() @Inject(A2A_METHODS) private readonly a2aMethods?: DialectMethods,
  ) {}

  onModuleDestroy(): void {
    for (const controller of this.streams) controller.abort();
  }

  async answer(request: FastifyRequest, reply: FastifyReply, endpointHandle: string | null): Promise<void> {
    const headers = request.headers;
    let id: JsonRpcId = null;
    let dialect: Dialect = preliminaryDialect(headers);
    let streaming = false;
    try {
      const envelope = this.readEnvelope(request.body);
      id = envelope.id;
      const caller = await this.authenticate(headers, request.ip);
      await this.enforceRateLimit(caller, reply);
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
      const releaseStreamSlot = STREAMING_CANONICAL.has(canonical) ? this.reserveStreamSlot(caller) : undefined;
      try {
        const result = await this.dispatch(call);
        if (reply.sent) {
          if (result instanceof JsonRpcEventStream) result.release();
          return;
        }
        if (result instanceof JsonRpcEventStream) {
          await this.stream(reply, id, result, dialect, releaseStreamSlot);
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
      if (relayError.reason === 'unauthenticated') reply.header('www-authenticate', 'Bearer realm="agentrelay"');
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

  private async authenticate(headers: FastifyRequest['headers'], address: string): Promise<AgentIdentity> {
    return this.authenticator.authenticate(headers, address);
  }

  private async enforceRateLimit(caller: AgentIdentity, reply: FastifyReply): Promise<void> {
    const decision = await this.rateLimiter.consume(caller.id);
    reply.header('x-ratelimit-limit', String(decision.limit));
    if (!decision.allowed) {
      reply.header('retry-after', String(decision.retryAfterSeconds));
      throw new RelayError('rate_limited', `Rate limit of ${decision.limit} requests per minute exceeded; retry after ${decision.retryAfterSeconds} s`, {
        limit: decision.limit,
        retry_after_seconds: decision.retryAfterSeconds,
      });
    }
  }

  /** Takes one of the caller's stream slots, or throws `rate_limited` (429); the returned release is idempotent. */
  private reserveStreamSlot(caller: AgentIdentity): () => void {
    const limit = this.config.RELAY_STREAMS_PER_AGENT;
    const open = this.streamsPerAgent.get(caller.id) ?? 0;
    if (open >= limit) {
      throw new RelayError(
        'rate_limited',
        `At most ${limit} streams per agent may be open at once (RELAY_STREAMS_PER_AGENT); close one before opening another`,
        {
          limit,
          limit_name: 'RELAY_STREAMS_PER_AGENT',
        },
      );
    }
    this.streamsPerAgent.set(caller.id, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const remaining = (this.streamsPerAgent.get(caller.id) ?? 1) - 1;
      if (remaining > 0) this.streamsPerAgent.set(caller.id, remaining);
      else this.streamsPerAgent.delete(caller.id);
    };
  }

  private dispatch(call: JsonRpcCall): Promise<unknown> {
    if (call.dialect.kind === 'agentrelay' && AGENTRELAY_CANONICAL.has(call.canonical)) return this.agentRelayMethods.handle(call);
    if (!this.a2aMethods) throw new RelayError('method_not_found', `Method '${call.method}' not found`, { method: call.method });
    return this.a2aMethods.handle(call);
  }

  /**
   * Writes a stream result as Server-Sent Events: one `data:` event per item, each a whole JSON-RPC
   * response repeating the request id; an error once the stream has started as an `event: error`;
   * a `: keep-alive` comment when idle. Closing the connection stops the stream's work.
   */
  private async stream(reply: FastifyReply, id: JsonRpcId, stream: JsonRpcEventStream, dialect: Dialect, onClosed?: () => void): Promise<void> {
    reply.hijack();
    const raw = reply.raw;
    const controller = new AbortController();
    const onClose = (): void => {
      controller.abort();
      onClosed?.();
    };
    raw.on('close', onClose);
    this.streams.add(controller);
    this.metrics.streamOpened();
    const open = (): boolean => !controller.signal.aborted && !raw.destroyed && !raw.writableEnded;
    let keepAlive: NodeJS.Timeout | undefined;
    try {
      const headers: Record<string, string | number | string[]> = {};
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
      raw.writeHead(200, {
        ...headers,
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      raw.flushHeaders();
      keepAlive = setInterval(() => {
        if (open()) raw.write(': keep-alive\n\n');
      }, SSE_KEEP_ALIVE_MS);
      for await (const item of stream.open(controller.signal)) {
        if (!open()) break;
        const event: JsonRpcResponse = { jsonrpc: '2.0', id, result: item.event };
        raw.write(`id: ${item.id}\ndata: ${JSON.stringify(event)}\n\n`);
      }
    } catch (error) {
      if (open()) {
        const rendered = renderRelayError(asRelayError(error), dialect);
        const event: JsonRpcResponse = { jsonrpc: '2.0', id, error: rendered.error };
        raw.write(`event: error\ndata: ${JSON.stringify(event)}\n\n`);
      } else {
        this.logger.debug({ err: error }, 'error after the stream was closed');
      }
    } finally {
      stream.release();
      clearInterval(keepAlive);
      raw.off('close', onClose);
      this.streams.delete(controller);
      this.metrics.streamClosed();
      if (!raw.writableEnded) raw.end();
    }
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
