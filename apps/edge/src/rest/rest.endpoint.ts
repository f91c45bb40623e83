import { Inject, Injectable, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { negotiateVersion, streamResponseToProto, type CanonicalMethod, type Dialect, type Json } from '@app/a2a';
import { RelayError, retryAfterSeconds, type WireVersion } from '@app/contracts';
import { annotateRpcError, annotateRpcMethod } from '@app/tracing';
import { CallerGate } from '../endpoint/caller-gate';
import { SseWriter, type SseFraming } from '../endpoint/sse-writer';
import { lastEventIdHeader } from '../streams/task-streams';
import { A2aMethods } from '../jsonrpc/a2a/a2a-methods';
import { asRelayError } from '../jsonrpc/json-rpc-errors';
import { UnparseableJson } from '../jsonrpc/json-rpc.http';
import { EventStream } from '../streams/task-streams';
import { RequestMetrics } from '../metrics/request-metrics';
import { renderRelayError } from '../jsonrpc/json-rpc-errors';
import { renderRestError, sendLegacyRestError, sendRestError } from './rest-errors';
import { bearerChallenge } from '../auth/token-verifier';

/** One HTTP+JSON route's operation: the A2A method it is and how its params are read from the request. */
export interface RestOperation {
  canonical: CanonicalMethod;
  /** The route as a client names it in errors, e.g. `POST /tasks/{id}:cancel`. */
  route: string;
  /** Builds the method's params from the path, query and body; throws `invalid_params`. */
  params: (body: unknown) => Record<string, unknown>;
  /** The v0.3 binding under `/v1/…`: its result is the v1.0 rendering translated by `render`. */
  legacy?: {
    /** The wire version the command renders in (v1.0, except for the v0.3 card). */
    version: WireVersion;
    render: (result: Json) => unknown;
  };
}

const STREAMING: ReadonlySet<CanonicalMethod> = new Set(['stream', 'resubscribe']);

const V1: Dialect = { kind: 'a2a', version: '1.0' };
const V03: Dialect = { kind: 'a2a', version: '0.3' };

/** A StreamResponse is written as it is; an error that ends a stream as its `google.rpc.Status` body. */
const REST_FRAMING: SseFraming = {
  event: (item) => item,
  error: (error) => renderRestError(error).body,
};

/** v0.3: each StreamResponse in the v0.3 proto shape; an error as the v0.3 error object. */
const LEGACY_FRAMING: SseFraming = {
  event: (item) => streamResponseToProto(item as Json),
  error: (error) => renderRelayError(error, V03).error,
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
    const legacy = operation.legacy;
    const dialect = legacy ? V03 : V1;
    try {
      const caller = await this.gate.admit(request, reply);
      this.assertVersion(request.headers['a2a-version'], legacy ? '0.3' : '1.0');
      this.metrics.identify(request, operation.canonical, dialect);
      annotateRpcMethod(operation.canonical, 'a2a');
      if (request.body instanceof UnparseableJson) throw new RelayError('parse_error', `Invalid JSON payload: ${request.body.detail}`);
      const params = operation.params(request.body);
      const lastEventId = lastEventIdHeader(request.headers);
      const releaseStreamSlot = STREAMING.has(operation.canonical) ? this.sse.reserveSlot(caller) : undefined;
      try {
        const result = await this.methods.execute({
          method: operation.route,
          canonical: operation.canonical,
          params,
          version: legacy?.version ?? '1.0',
          caller,
          endpointHandle: handle,
          ...(lastEventId !== undefined ? { lastEventId } : {}),
        });
        if (reply.sent) return;
        if (result instanceof EventStream) {
          await this.sse.write(reply, result, legacy ? LEGACY_FRAMING : REST_FRAMING, releaseStreamSlot);
          return;
        }
        // DeleteTaskPushNotificationConfig answers google.protobuf.Empty.
        const body = result === null || result === undefined ? {} : legacy ? legacy.render(result as Json) : result;
        reply.code(200).header('content-type', 'application/json; charset=utf-8').send(body);
      } finally {
        releaseStreamSlot?.();
      }
    } catch (error) {
      if (reply.sent) {
        this.logger.warn({ err: error }, 'error after the reply was sent');
        return;
      }
      const relayError = asRelayError(error);
      this.metrics.failed(request, dialect, relayError.reason);
      annotateRpcError(relayError.reason);
      if (relayError.reason === 'unauthenticated') reply.header('www-authenticate', bearerChallenge(relayError));
      const retryAfter = retryAfterSeconds(relayError);
      if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
      if (legacy) sendLegacyRestError(reply, relayError);
      else sendRestError(reply, relayError);
    }
  }

  /**
   * Each route speaks one version: `/v1/…` A2A 0.3, the others 1.0. No header means the route's
   * version (the two bindings have their own paths); another version is `version_not_supported`.
   */
  private assertVersion(header: string | string[] | undefined, routeVersion: WireVersion): void {
    const raw = (Array.isArray(header) ? header[0] : header)?.trim() ?? '';
    if (raw === '' || negotiateVersion(raw) === routeVersion) return;
    const paths = routeVersion === '1.0' ? 'the v0.3 HTTP+JSON binding is under /v1/…' : 'the v1.0 HTTP+JSON binding has no /v1 prefix';
    throw new RelayError('version_not_supported', `This HTTP+JSON route speaks A2A ${routeVersion}, not '${raw}' (${paths})`, {
      requested: raw,
      supported: [routeVersion],
    });
  }
}
