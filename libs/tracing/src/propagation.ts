import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  trace,
  TraceFlags,
  type Context,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import { isTracingOn } from './service-tracers';

/** Message headers as NATS (and JetStream) carry them: one value per name is all trace context needs. */
export interface HeaderCarrier {
  get(name: string): string;
  set(name: string, value: string): void;
  has?(name: string): boolean;
}

export const TRACEPARENT_HEADER = 'traceparent';
export const TRACESTATE_HEADER = 'tracestate';

const headerSetter: TextMapSetter<HeaderCarrier> = {
  set: (carrier, key, value) => carrier.set(key, value),
};

const headerGetter: TextMapGetter<HeaderCarrier> = {
  get: (carrier, key) => carrier.get(key) || undefined,
  keys: () => [TRACEPARENT_HEADER, TRACESTATE_HEADER],
};

const recordSetter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

const recordGetter: TextMapGetter<Record<string, string | string[] | undefined>> = {
  get: (carrier, key) => carrier[key],
  keys: (carrier) => Object.keys(carrier),
};

/** Writes `traceparent` (and `tracestate`) of `from` into message headers. */
export function injectTraceHeaders(headers: HeaderCarrier, from: Context = context.active()): void {
  propagation.inject(from, headers, headerSetter);
}

/** The remote parent named by message headers (a fresh root context when they name none). */
export function extractTraceHeaders(headers: HeaderCarrier | undefined): Context {
  return headers ? propagation.extract(ROOT_CONTEXT, headers, headerGetter) : ROOT_CONTEXT;
}

/** The remote parent named by HTTP request headers (or a plain header record). */
export function extractTraceRecord(headers: Record<string, string | string[] | undefined>): Context {
  return propagation.extract(ROOT_CONTEXT, headers, recordGetter);
}

/** `traceparent` (and `tracestate`) of `from` as a header record. */
export function traceRecordOf(from: Context): Record<string, string> {
  const record: Record<string, string> = {};
  propagation.inject(from, record, recordSetter);
  return record;
}

/** The `traceparent` and `tracestate` among a header record, as they are. */
export function pickTraceHeaders(headers: Record<string, string>): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of [TRACEPARENT_HEADER, TRACESTATE_HEADER]) if (headers[name]) picked[name] = headers[name];
  return picked;
}

/**
 * The `traceparent` of the active span when tracing is on and it is sampled, else null: what a
 * row written now stores so that work done later, elsewhere, can link back to this request.
 */
export function currentTraceParent(): string | null {
  if (!isTracingOn()) return null;
  const spanContext = trace.getSpanContext(context.active());
  if (!spanContext || !isSpanContextValid(spanContext) || (spanContext.traceFlags & TraceFlags.SAMPLED) === 0) return null;
  return traceRecordOf(context.active())[TRACEPARENT_HEADER] ?? null;
}
