import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { tracePostgresQueries } from './postgres';
import { forgetServiceTracer, registerServiceTracer, type RelayTracer } from './service-tracers';

/** The standard `OTEL_*` keys the relay reads (through each app's config class). */
export interface TracingSettings {
  OTEL_SDK_DISABLED: boolean;
  /** `otlp` turns tracing on, `none` keeps it off; empty: on when an OTLP endpoint is set. */
  OTEL_TRACES_EXPORTER: string;
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
  OTEL_SERVICE_NAME?: string;
  OTEL_TRACES_SAMPLER: string;
  OTEL_TRACES_SAMPLER_ARG?: number;
}

let globalsInstalled = false;
let testExporter: SpanExporter | null = null;

/**
 * Tests: every service started afterwards (in this process) traces, sampling everything, and
 * hands each finished span to `exporter` at once. `null` goes back to the configuration.
 */
export function useSpanExporterForTests(exporter: SpanExporter | null): void {
  testExporter = exporter;
}

/** Whether the settings ask for traces: `OTEL_TRACES_EXPORTER=otlp`, or an OTLP endpoint set, unless disabled. */
export function tracingRequested(settings: TracingSettings): boolean {
  if (settings.OTEL_SDK_DISABLED) return false;
  const exporter = settings.OTEL_TRACES_EXPORTER.trim().toLowerCase();
  if (exporter === 'otlp') return true;
  if (exporter !== '') return false;
  return Boolean(settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || settings.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/** Where spans go: the traces endpoint as given, else `<endpoint>/v1/traces`, else the local collector's default. */
export function otlpTracesUrl(settings: TracingSettings): string {
  if (settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (settings.OTEL_EXPORTER_OTLP_ENDPOINT) return `${settings.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`;
  return 'http://localhost:4318/v1/traces';
}

/** The sampler named by `OTEL_TRACES_SAMPLER` (parent-based, always on, by default), with its ratio argument. */
export function samplerOf(settings: TracingSettings): Sampler {
  const ratio = settings.OTEL_TRACES_SAMPLER_ARG ?? 1;
  switch (settings.OTEL_TRACES_SAMPLER) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/**
 * Starts tracing for one service of this process when the settings ask for it (or a test exporter
 * is set); returns undefined, and changes nothing, otherwise. Called once per service at startup.
 */
export function startTracing(service: string, settings: TracingSettings): RelayTracer | undefined {
  let processor: SpanProcessor;
  let sampler: Sampler;
  if (testExporter) {
    processor = new SimpleSpanProcessor(testExporter);
    sampler = new AlwaysOnSampler();
  } else if (tracingRequested(settings)) {
    processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: otlpTracesUrl(settings) }));
    sampler = samplerOf(settings);
  } else {
    return undefined;
  }
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.OTEL_SERVICE_NAME || `agentrelay-${service}` }),
    sampler,
    spanProcessors: [processor],
  });
  if (!globalsInstalled) {
    // The async-local context manager and the W3C propagator, once per process.
    provider.register({ propagator: new W3CTraceContextPropagator() });
    tracePostgresQueries();
    globalsInstalled = true;
  }
  const relayTracer: RelayTracer = {
    service,
    tracer: provider.getTracer('agentrelay', '0.1.0'),
    shutdown: async () => {
      forgetServiceTracer(relayTracer);
      await provider.shutdown();
    },
  };
  registerServiceTracer(relayTracer);
  return relayTracer;
}
