import { context, defaultTextMapGetter, isSpanContextValid, ROOT_CONTEXT, trace, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { randomIdHex } from '@app/secrets/random-ids';
import { currentTraceParent, TRACEPARENT_HEADER } from './propagation';
import { isTracingOn } from './service-tracers';

/*
 * The trace of a handoff (docs/chains.md): every handoff of a chain keeps its root's W3C trace
 * id, its deliveries carry a `traceparent` in that trace whether or not the relay exports spans,
 * and a call that carries one back is linked to the handoff it names. These helpers read and write
 * trace context without the OpenTelemetry SDK, so they work with tracing off as well.
 */

/** A handoff's place in traces: its chain's trace id and the span its deliveries continue when nothing else is in that trace. */
export interface HandoffTrace {
  traceId: string;
  spanId: string;
}

const w3c = new W3CTraceContextPropagator();

/** The span context a `traceparent` value names, if it is a valid one. */
export function parseTraceParent(value: string | string[] | undefined): SpanContext | null {
  const header = Array.isArray(value) ? value[0] : value;
  if (!header) return null;
  const spanContext = trace.getSpanContext(w3c.extract(ROOT_CONTEXT, { [TRACEPARENT_HEADER]: header }, defaultTextMapGetter));
  return spanContext && isSpanContextValid(spanContext) ? spanContext : null;
}

/** The trace id of a call's `traceparent` header; null when it sends none or a malformed one. */
export function traceIdOfHeader(value: string | string[] | undefined): string | null {
  return parseTraceParent(value)?.traceId ?? null;
}

/** A `traceparent` value (version 00). */
export function formatTraceParent(traceId: string, spanId: string, flags: number): string {
  return `00-${traceId}-${spanId}-${(flags & 0xff).toString(16).padStart(2, '0')}`;
}

export function newTraceId(): string {
  return randomIdHex(16);
}

export function newSpanId(): string {
  return randomIdHex(8);
}

/** The span context of the active traced request, when this process traces. */
function activeSpanContext(): SpanContext | null {
  if (!isTracingOn()) return null;
  const spanContext = trace.getSpanContext(context.active());
  return spanContext && isSpanContextValid(spanContext) ? spanContext : null;
}

/**
 * The trace of a new handoff: its parent's (a chain keeps its root's trace id), else that of the
 * traced request creating it, else the one the caller's `traceparent` named, else a new one. Its
 * deliveries hang under the span creating it when that span is in the trace, else under the
 * parent's span (or a span id made for it).
 */
export function newHandoffTrace(parent: HandoffTrace | null, callerTraceId: string | null): HandoffTrace {
  const active = activeSpanContext();
  const traceId = parent?.traceId ?? active?.traceId ?? callerTraceId ?? newTraceId();
  if (active && active.traceId === traceId) return { traceId, spanId: active.spanId };
  return { traceId, spanId: parent?.spanId ?? newSpanId() };
}

/** A handoff's trace as stored on its row, if it has one (tasks stored before traces were kept have none). */
export function handoffTraceOf(row: { trace_id: string | null; trace_span_id: string | null }): HandoffTrace | null {
  return row.trace_id && row.trace_span_id ? { traceId: row.trace_id, spanId: row.trace_span_id } : null;
}

/**
 * The `traceparent` an event of a handoff is published with, which its deliveries continue: the
 * active span when it is in the handoff's trace; else the handoff's own span, and the active span
 * (a call in a trace of its own) gets a link to it. Without a handoff trace: the active span's, as
 * any other event.
 */
export function handoffTraceParent(handoff: HandoffTrace | null): string | null {
  if (!handoff) return currentTraceParent();
  const active = activeSpanContext();
  if (active && active.traceId === handoff.traceId) return formatTraceParent(active.traceId, active.spanId, active.traceFlags);
  if (active) trace.getActiveSpan()?.addLink({ context: { traceId: handoff.traceId, spanId: handoff.spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true } });
  return formatTraceParent(handoff.traceId, handoff.spanId, TraceFlags.SAMPLED);
}
