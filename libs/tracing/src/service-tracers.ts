import { context, createContextKey, type Context, type Tracer } from '@opentelemetry/api';

/*
 * Which services of this process trace, and which of them a span belongs to: what the Postgres
 * and NATS seams, the span helpers and the propagation read on the hot path. Starting tracing
 * (tracing.ts) registers a service's tracer here.
 */

/** One service's tracer: spans it starts carry the service's name. */
export interface RelayTracer {
  readonly service: string;
  readonly tracer: Tracer;
  /** Exports the spans still buffered and stops (called when the app shuts down). */
  shutdown(): Promise<void>;
}

/** The context value naming the tracer of the service whose span is active (the Postgres and NATS seams read it). */
export const SERVICE_TRACER = createContextKey('agentrelay.service-tracer');

let tracingOn = false;
const tracers = new Map<string, RelayTracer>();

/** Whether any service of this process traces; decided at startup, read on the hot path. */
export function isTracingOn(): boolean {
  return tracingOn;
}

/** Records a started service's tracer: from now on this process traces. */
export function registerServiceTracer(relayTracer: RelayTracer): void {
  tracers.set(relayTracer.service, relayTracer);
  tracingOn = true;
}

/** Forgets a service's tracer when it shuts down (a newer tracer of the same service stays). */
export function forgetServiceTracer(relayTracer: RelayTracer): void {
  if (tracers.get(relayTracer.service) === relayTracer) tracers.delete(relayTracer.service);
}

/** The tracer of a service of this process, for work that runs outside any request (e.g. a delivery worker). */
export function tracerOf(service: string): RelayTracer | undefined {
  return tracingOn ? tracers.get(service) : undefined;
}

/** `parent` with `tracer` recorded as the service whose spans continue it. */
export function withServiceTracer(parent: Context, tracer: RelayTracer): Context {
  return parent.setValue(SERVICE_TRACER, tracer);
}

/** The tracer of the service whose span is active, if tracing is on. */
export function activeServiceTracer(active: Context = context.active()): RelayTracer | undefined {
  return active.getValue(SERVICE_TRACER) as RelayTracer | undefined;
}
