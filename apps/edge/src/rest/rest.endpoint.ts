import { Inject, Injectable, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { negotiateVersion, type CanonicalMethod, type Dialect } from '@app/a2a';
import { RelayError, retryAfterSeconds } from '@app/contracts';
import { annotateRpcError, annotateRpcMethod } from '@app/tracing';
import { CallerGate } from '../endpoint/caller-gate';
import { SseWriter, type SseFraming } from '../endpoint/sse-writer';
import { lastEventIdOf } from '../jsonrpc/a2a/a2a-command';
import { A2aMethods } from '../jsonrpc/a2a/a2a-methods';
import { asRelayError } from '../jsonrpc/json-rpc-errors';
import { UnparseableJson } from '../jsonrpc/json-rpc.http';
import { JsonRpcEventStream } from '../jsonrpc/json-rpc.types';
import { RequestMetrics } from '../metrics/request-metrics';
import { renderRestError, sendRestError } from './rest-errors';

/** One HTTP+JSON route's operation: the A2A method it is and how its params are read from the request. */
export interface RestOperation {
  canonical: CanonicalMethod;
  /** The route as a client names it in errors, e.g. `POST /tasks/{id}:cancel`. */
  route: string;
  /** Builds the method's params from the path, query and body; throws `invalid_params`. */
  params: (body: unknown) => Record<string, unknown>;
}

const STREAMING: ReadonlySet<CanonicalMethod> = new Set(['stream', 'resubscribe']);

const V1: Dialect = { kind: 'a2a', version: '1.0' };

/** A StreamResponse is written as it is; an error that ends a stream as its `google.rpc.Status` body. */
const REST_FRAMING: SseFraming = {
  event: (item) => item,
  error: (error) => renderRestError(error).body,
};

/**
 * The A2A v1.0 HTTP+JSON binding of an agent endpoint (docs/dialects.md#http-json-binding): the
 * same gate (API key, rate limit, stream slots), the same A2A methods and the same errors as
 * JSON-RPC, mapped to HTTP statuses and `google.rpc.Status` bodies.
 */
@Injectable()
export class RestEndpoint {
  private readonly logger = new Logger(RestEndpoint.name);

  constructor(
    @Inject(CallerGate) private readonly gate: CallerGate,
    @Inject(SseWriter) private readonly sse: SseWriter,
    @Inject(RequestMetrics) private readonly metrics: RequestMetrics,
    @Inject(A2aMethods) private readonly methods: A2aMethods,
  ) {}

  async answer(request: FastifyRequest, reply: FastifyReply, handle: string, operation: RestOperation): Promise<void> {
    try {
      const caller = await this.gate.admit(request, reply);
      this.assertVersion(request.headers['a2a-version']);
      this.metrics.identify(request, operation.canonical, V1);
      annotateRpcMethod(operation.canonical, 'a2a');
      if (request.body instanceof UnparseableJson) throw new RelayError('parse_error', `Invalid JSON payload: ${request.body.detail}`);
      const params = operation.params(request.body);
      const lastEventId = lastEventIdOf(request.headers);
      const releaseStreamSlot = STREAMING.has(operation.canonical) ? this.sse.reserveSlot(caller) : undefined;
      try {
        const result = await this.methods.execute({
          method: operation.route,
          canonical: operation.canonical,
          params,
          version: '1.0',
          caller,
          endpointHandle: handle,
          ...(lastEventId !== undefined ? { lastEventId } : {}),
        });
        if (reply.sent) return;
        if (result instanceof JsonRpcEventStream) {
          await this.sse.write(reply, result, REST_FRAMING, releaseStreamSlot);
          return;
        }
        // DeleteTaskPushNotificationConfig answers google.protobuf.Empty.
        reply
          .code(200)
          .header('content-type', 'application/json; charset=utf-8')
          .send(result ?? {});
      } finally {
        releaseStreamSlot?.();
      }
    } catch (error) {
      if (reply.sent) {
        this.logger.warn({ err: error }, 'error after the reply was sent');
        return;
      }
      const relayError = asRelayError(error);
      this.metrics.failed(request, V1, relayError.reason);
      annotateRpcError(relayError.reason);
      if (relayError.reason === 'unauthenticated') reply.header('www-authenticate', 'Bearer realm="agentrelay"');
      const retryAfter = retryAfterSeconds(relayError);
      if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
      sendRestError(reply, relayError);
    }
  }

  /** These routes speak A2A 1.0; no header means 1.0 too (the v0.3 binding had its own `/v1/…` paths). */
  private assertVersion(header: string | string[] | undefined): void {
    const raw = (Array.isArray(header) ? header[0] : header)?.trim() ?? '';
    if (raw === '') return;
    if (negotiateVersion(raw) === '1.0') return;
    throw new RelayError('version_not_supported', `The HTTP+JSON binding speaks A2A 1.0, not '${raw}'; a v0.3 client uses the JSON-RPC interface of the card`, {
      requested: raw,
      supported: ['1.0'],
    });
  }
}
