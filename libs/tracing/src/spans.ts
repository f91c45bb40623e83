import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { formatTraceParent, newSpanId, newTraceId, parseTraceParent } from './handoff-trace';
import {
  extractTraceHeaders,
  extractTraceRecord,
  injectTraceHeaders,
  TRACEPARENT_HEADER,
  TRACESTATE_HEADER,
  traceRecordOf,
  type HeaderCarrier,
} from './propagation';
import { activeServiceTracer, isTracingOn, withServiceTracer, type RelayTracer } from './service-tracers';

/** A started span with the context it is active in. */
export class ActiveSpan {
  constructor(
    readonly span: Span,
    readonly context: Context,
  ) {}

  /** Runs `fn` with this span active (its NATS requests, queries and log lines belong to it). */
  run<T>(fn: () => T): T {
    return context.with(this.context, fn);
  }

  /** Ends the span, as an error when `error` is given. */
  end(error?: unknown): void {
    endSpan(this.span, error);
  }
}

function failSpan(span: Span, error: unknown): void {
  const reason = (error as { reason?: unknown } | null)?.reason;
  const message = error instanceof Error ? error.message : typeof reason === 'string' ? reason : String(error);
  if (typeof reason === 'string') span.setAttribute('error.type', reason);
  else if (error instanceof Error) span.setAttribute('error.type', error.name);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** Ends `span`, as an error when `error` is given. */
export function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined && error !== null) failSpan(span, error);
  span.end();
}

/** Resolves or rejects as `work` does, ending `span` with its outcome. */
export async function endWith<T>(span: Span, work: Promise<T>): Promise<T> {
  try {
    const value = await work;
    span.end();
    return value;
  } catch (error) {
    failSpan(span, error);
    span.end();
    throw error;
  }
}

/**
 * The edge's server span of one HTTP request, continuing the caller's `traceparent` when it sends
 * one. `route` is the route pattern (never a handle).
 */
export function startHttpServerSpan(tracer: RelayTracer, method: string, route: string, headers: Record<string, string | string[] | undefined>): ActiveSpan {
  const parent = extractTraceRecord(headers);
  const span = tracer.tracer.startSpan(
    `${method} ${route}`,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'http.route': route } },
    parent,
  );
  return new ActiveSpan(span, withServiceTracer(trace.setSpan(parent, span), tracer));
}

/** Ends the edge's server span of a request with its response status (5xx is an error). */
export function endHttpServerSpan(active: ActiveSpan, statusCode: number): void {
  active.span.setAttribute('http.response.status_code', statusCode);
  if (statusCode >= 500) active.span.setStatus({ code: SpanStatusCode.ERROR });
  active.span.end();
}

/** Names the JSON-RPC method on the active server span (the edge's endpoint knows it once the envelope is read). */
export function annotateRpcMethod(method: string, dialect: string): void {
  if (!isTracingOn()) return;
  trace.getActiveSpan()?.setAttributes({ 'rpc.system': 'jsonrpc', 'rpc.method': method, 'agentrelay.dialect': dialect });
}

/** Records the relay error a JSON-RPC call ended with on the active server span. */
export function annotateRpcError(reason: string): void {
  if (!isTracingOn()) return;
  trace.getActiveSpan()?.setAttribute('error.type', reason);
}

/**
 * A NATS request as a client span of the active service's span, its `traceparent` injected into
 * `headers` beside the request id. Without tracing (or outside any traced request) it is `send()`.
 */
export function traceNatsRequest<T>(subject: string, headers: HeaderCarrier, send: () => Promise<T>): Promise<T> {
  if (!isTracingOn()) return send();
  const parent = context.active();
  const tracer = activeServiceTracer(parent);
  if (!tracer) return send();
  const span = tracer.tracer.startSpan(subject, { kind: SpanKind.CLIENT, attributes: natsAttributes(subject) }, parent);
  const active = trace.setSpan(parent, span);
  injectTraceHeaders(headers, active);
  return endWith(span, context.with(active, send));
}

function natsAttributes(subject: string): Attributes {
  return { 'rpc.system': 'nats', 'messaging.system': 'nats', 'messaging.destination.name': subject };
}

/**
 * A service's server span of one NATS request, child of the caller's span named by the message
 * headers. `run` gets the span and ends it when the handler is done; it gets undefined without
 * tracing, and when the caller sent no trace context (an untraced caller such as a readiness
 * probe starts no trace in a service).
 */
export function runInServerSpan<T>(
  tracer: RelayTracer | undefined,
  subject: string,
  headers: HeaderCarrier | undefined,
  run: (span: ActiveSpan | undefined) => T,
): T {
  if (!tracer) return run(undefined);
  const parent = extractTraceHeaders(headers);
  if (!trace.getSpanContext(parent)) return run(undefined);
  const span = tracer.tracer.startSpan(subject, { kind: SpanKind.SERVER, attributes: natsAttributes(subject) }, parent);
  const active = new ActiveSpan(span, withServiceTracer(trace.setSpan(parent, span), tracer));
  return active.run(() => run(active));
}

/**
 * The trace headers a recorded piece of later work keeps, so that it continues the trace of what
 * caused it: the `traceparent` (and `tracestate`) of an incoming message, tracing on or off (a
 * task event's names its handoff's trace, docs/chains.md).
 */
export function traceLinkHeaders(headers: HeaderCarrier | undefined): Record<string, string> {
  if (!headers) return {};
  const traceparent = headers.get(TRACEPARENT_HEADER);
  if (!traceparent) return {};
  const tracestate = headers.get(TRACESTATE_HEADER);
  return tracestate ? { [TRACEPARENT_HEADER]: traceparent, [TRACESTATE_HEADER]: tracestate } : { [TRACEPARENT_HEADER]: traceparent };
}

/**
 * One delivery attempt, in the trace named by the `traceparent` among the delivery's `headers`
 * (its handoff's: a chain is one trace), or a new one. The receiver is sent the attempt's
 * `traceparent` instead: the same trace id, the attempt's span id. Without tracing the attempt has
 * no span, and gets a span id of its own all the same, so every delivery carries a `traceparent`.
 */
export function traceDeliveryAttempt<T>(
  tracer: RelayTracer | undefined,
  channel: string,
  headers: Record<string, string>,
  attempt: () => Promise<T>,
): Promise<T> {
  const cause = parseTraceParent(headers[TRACEPARENT_HEADER]);
  if (!tracer) {
    headers[TRACEPARENT_HEADER] = formatTraceParent(cause?.traceId ?? newTraceId(), newSpanId(), cause?.traceFlags ?? TraceFlags.SAMPLED);
    return attempt();
  }
  const parent = cause ? trace.setSpanContext(ROOT_CONTEXT, cause) : ROOT_CONTEXT;
  const span = tracer.tracer.startSpan(`deliver ${channel}`, { kind: SpanKind.CLIENT, attributes: { 'agentrelay.delivery.channel': channel } }, parent);
  const active = withServiceTracer(trace.setSpan(parent, span), tracer);
  const tracestate = headers[TRACESTATE_HEADER];
  delete headers[TRACESTATE_HEADER];
  Object.assign(headers, traceRecordOf(active));
  if (tracestate && !headers[TRACESTATE_HEADER]) headers[TRACESTATE_HEADER] = tracestate;
  return endWith(span, context.with(active, attempt));
}
