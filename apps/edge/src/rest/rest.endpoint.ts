import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { negotiateVersion, streamResponseToProto, type Dialect, type Json } from '@app/a2a';
import { RelayError, type AgentIdentity, type WireVersion } from '@app/contracts';
import { traceIdOfHeader } from '@app/tracing';
import { AgentCallPipeline, setRefusalHeaders, type AgentCallBinding, type PreparedCall } from '../endpoint/agent-call';
import type { SseFraming } from '../endpoint/sse-writer';
import { A2aMethods } from '../methods/a2a/a2a-methods';
import { renderRelayError } from '../errors/json-rpc-errors';
import { bindingOf, UnparseableJson } from '../endpoint/http-intake';
import { refusalInTurn, type CallersAtLimit } from '../endpoint/callers-at-limit';
import { findRequestProblem } from '../input/input-guard';
import type { RequestMetrics } from '../metrics/request-metrics';
import { lastEventIdHeader } from '../streams/task-streams';
import { renderRestError, sendLegacyRestError, sendRestError } from '../errors/rest-errors';
import { describePath, matchRestRoute, matchTenantRestRoute, withPathTenant, type TenantRestMatch } from './rest-routes';

const V1: Dialect = { kind: 'a2a', version: '1.0' };
const V03: Dialect = { kind: 'a2a', version: '0.3' };

/** v1.0: a StreamResponse is written as it is; an error that ends a stream as its `google.rpc.Status` body. */
const REST_FRAMING: SseFraming = {
  event: (item) => item,
  error: (error) => renderRestError(error).body,
};

/** v0.3: each StreamResponse in the v0.3 proto shape; an error as the v0.3 error object. */
const LEGACY_FRAMING: SseFraming = {
  event: (item) => streamResponseToProto(item as Json),
  error: (error) => renderRelayError(error, V03).error,
};

/** The segments of a path under `/a2a/{handle}`, each URL-decoded; undefined when one cannot be decoded. */
function segmentsAfterHandle(url: string): string[] | undefined {
  const segments = url.split('?')[0].split('/').slice(3);
  try {
    return segments.map((segment) => decodeURIComponent(segment));
  } catch {
    return undefined;
  }
}

/**
 * The A2A HTTP+JSON binding of an agent endpoint (docs/dialects.md#http-json-binding), v1.0 and
 * v0.3 under `/v1/…`: the request's route from the route table, its params, and the answers as
 * HTTP statuses with `google.rpc.Status` bodies (v0.3: its error objects). Everything else is the
 * same as JSON-RPC's (AgentCallPipeline).
 */
@Injectable()
export class RestEndpoint {
  constructor(
    @Inject(AgentCallPipeline) private readonly pipeline: AgentCallPipeline,
    @Inject(A2aMethods) private readonly methods: A2aMethods,
  ) {}

  answer(request: FastifyRequest, reply: FastifyReply, handle: string): Promise<void> {
    return this.pipeline.run(request, reply, new RestBinding(request, handle, this.methods));
  }
}

/**
 * Answers an HTTP+JSON call whose key is known to be at its limit (CallersAtLimit) before it is
 * parsed for its route, authenticated or looked up: the refusal the whole path would give (the
 * route's version's error body, the same headers and metrics). False, leaving the call to the whole
 * path, when the key is not known so, the path is no operation, or the input has an error of its
 * own, which the whole path answers first. `body`: the raw body of a POST.
 */
export async function answerKnownRestRefusal(
  atLimit: CallersAtLimit,
  metrics: RequestMetrics,
  request: FastifyRequest,
  reply: FastifyReply,
  body: Buffer | undefined,
): Promise<boolean> {
  if (bindingOf(request) !== 'http-json' || !atLimit.knows(request.headers)) return false;
  const segments = segmentsAfterHandle(request.url);
  const legacy = segments?.[0] === 'v1';
  if (!segments || !matchRestRoute(legacy ? '0.3' : '1.0', request.method, legacy ? segments.slice(1) : segments)) return false;
  let parsed: unknown;
  try {
    parsed = body === undefined || body.length === 0 ? undefined : JSON.parse(body.toString('utf8'));
  } catch {
    // Unparseable JSON is answered after the caller is admitted: the refusal comes first.
    parsed = undefined;
  }
  if (findRequestProblem({ method: request.method, params: request.params, query: request.query, body: parsed, routeOptions: request.routeOptions }))
    return false;
  const known = atLimit.refusalFor(request.headers);
  if (known === undefined) return false;
  const error = await refusalInTurn(known, reply);
  if (error === undefined) return true;
  metrics.failed(request, legacy ? V03 : V1, error.reason);
  setRefusalHeaders(reply, error);
  if (legacy) sendLegacyRestError(reply, error);
  else sendRestError(reply, error);
  return true;
}

class RestBinding implements AgentCallBinding {
  readonly dialect: Dialect;
  private readonly version: WireVersion;
  private readonly segments: string[] | undefined;
  private render: ((result: Json) => unknown) | undefined;

  constructor(
    private readonly request: FastifyRequest,
    private readonly handle: string,
    private readonly methods: A2aMethods,
  ) {
    const segments = segmentsAfterHandle(request.url);
    const legacy = segments?.[0] === 'v1';
    this.version = legacy ? '0.3' : '1.0';
    this.dialect = legacy ? V03 : V1;
    this.segments = legacy ? segments!.slice(1) : segments;
  }

  async prepare(admit: () => Promise<AgentIdentity>): Promise<PreparedCall> {
    const request = this.request;
    const prefix = this.version === '0.3' ? '/v1' : '';
    const match: TenantRestMatch | undefined = !this.segments
      ? undefined
      : this.version === '1.0'
        ? matchTenantRestRoute(request.method, this.segments)
        : matchRestRoute(this.version, request.method, this.segments);
    if (!match) {
      const path = `${prefix}${this.segments ? describePath(this.segments) : '/…'}`;
      throw new RelayError('method_not_found', `No HTTP+JSON operation ${request.method} ${path}`, { method: `${request.method} ${path}` });
    }
    const caller = await admit();
    this.assertVersion(request.headers['a2a-version']);
    if (request.body instanceof UnparseableJson) throw new RelayError('parse_error', `Invalid JSON payload: ${request.body.detail}`);
    const { route, binding } = match;
    const read = binding.params({
      body: request.body,
      query: (request.query as Record<string, unknown> | undefined) ?? {},
      id: match.id,
      configId: match.configId,
    });
    const tenant = match.tenant;
    const params = tenant !== undefined ? withPathTenant(read, tenant) : read;
    const path = `${prefix}${tenant !== undefined ? '/{tenant}' : ''}${binding.path}`;
    this.render = binding.render;
    const lastEventId = lastEventIdHeader(request.headers);
    const callerTraceId = traceIdOfHeader(request.headers.traceparent);
    const execute = () =>
      this.methods.execute({
        method: `${route.verb} ${path}`,
        canonical: route.canonical,
        params,
        // v0.3 answers are the v1.0 renderings translated by the route's `render`.
        version: '1.0',
        caller,
        endpointHandle: this.handle,
        ...(lastEventId !== undefined ? { lastEventId } : {}),
        ...(callerTraceId !== null ? { callerTraceId } : {}),
      });
    return { caller, canonical: route.canonical, dialect: this.dialect, execute, framing: this.version === '0.3' ? LEGACY_FRAMING : REST_FRAMING };
  }

  sendResult(reply: FastifyReply, result: unknown): void {
    // DeleteTaskPushNotificationConfig answers google.protobuf.Empty.
    const body = result === null || result === undefined ? {} : this.render ? this.render(result as Json) : result;
    reply.code(200).header('content-type', 'application/json; charset=utf-8').send(body);
  }

  sendError(reply: FastifyReply, error: RelayError): void {
    setRefusalHeaders(reply, error);
    if (this.version === '0.3') sendLegacyRestError(reply, error);
    else sendRestError(reply, error);
  }

  /**
   * Each route speaks one version: `/v1/…` A2A 0.3, the others 1.0. No header means the route's
   * version (the two bindings have their own paths); another version is `version_not_supported`.
   */
  private assertVersion(header: string | string[] | undefined): void {
    const raw = (Array.isArray(header) ? header[0] : header)?.trim() ?? '';
    if (raw === '' || negotiateVersion(raw) === this.version) return;
    const paths = this.version === '1.0' ? 'the v0.3 HTTP+JSON binding is under /v1/…' : 'the v1.0 HTTP+JSON binding has no /v1 prefix';
    throw new RelayError('version_not_supported', `This HTTP+JSON route speaks A2A ${this.version}, not '${raw}' (${paths})`, {
      requested: raw,
      supported: [this.version],
    });
  }
}
