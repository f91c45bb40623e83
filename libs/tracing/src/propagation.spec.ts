import { context, SpanKind, trace } from '@opentelemetry/api';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { currentTraceParent, extractTraceHeaders, TRACEPARENT_HEADER } from './propagation';
import { handoffTraceParent, newHandoffTrace, parseTraceParent, traceIdOfHeader } from './handoff-trace';
import { runInServerSpan, startHttpServerSpan, traceDeliveryAttempt, traceLinkHeaders, traceNatsRequest } from './spans';
import { isTracingOn, type RelayTracer } from './service-tracers';
import { startTracing, tracingRequested, useSpanExporterForTests, type TracingSettings } from './tracing';

const OFF: TracingSettings = { OTEL_SDK_DISABLED: false, OTEL_TRACES_EXPORTER: '', OTEL_TRACES_SAMPLER: 'parentbased_always_on' };

describe('tracing switch', () => {
  it('is off unless an exporter or an endpoint is configured, and OTEL_SDK_DISABLED wins', () => {
    expect(tracingRequested(OFF)).toBe(false);
    expect(tracingRequested({ ...OFF, OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingRequested({ ...OFF, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingRequested({ ...OFF, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
    expect(tracingRequested({ ...OFF, OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(false);
    expect(tracingRequested({ ...OFF, OTEL_SDK_DISABLED: true, OTEL_TRACES_EXPORTER: 'otlp' })).toBe(false);
  });

  it('without tracing, a NATS request gets no trace header and no service starts a tracer', async () => {
    expect(startTracing('off', OFF)).toBeUndefined();
    expect(isTracingOn()).toBe(false);
    const headers = natsHeaders();
    await expect(traceNatsRequest('relay.tasks.v1.get', headers, async () => 'reply')).resolves.toBe('reply');
    expect(headers.has(TRACEPARENT_HEADER)).toBe(false);
    expect(currentTraceParent()).toBeNull();
  });

  it('without tracing, a delivery still carries a traceparent: the trace id of its event, a span id of its own', async () => {
    const event = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const message = natsHeaders();
    message.set(TRACEPARENT_HEADER, event);
    const headers = traceLinkHeaders(message);
    expect(headers).toEqual({ [TRACEPARENT_HEADER]: event });
    await traceDeliveryAttempt(undefined, 'webhook', headers, async () => undefined);
    expect(headers[TRACEPARENT_HEADER]).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
    expect(headers[TRACEPARENT_HEADER]).not.toBe(event);
    // An event without one (written before handoffs kept a trace): a new trace.
    const bare: Record<string, string> = {};
    await traceDeliveryAttempt(undefined, 'push', bare, async () => undefined);
    expect(parseTraceParent(bare[TRACEPARENT_HEADER])).toMatchObject({ traceFlags: 1 });
  });

  it('reads the trace id of a caller’s traceparent without the SDK, and refuses malformed ones', () => {
    expect(traceIdOfHeader('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(traceIdOfHeader(['00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00'])).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    for (const bad of [
      undefined,
      '',
      'nonsense',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
    ])
      expect(traceIdOfHeader(bad)).toBeNull();
  });

  it('gives a new handoff its parent’s trace, else the caller’s, else a new one', () => {
    const parent = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
    expect(newHandoffTrace(parent, 'ffffffffffffffffffffffffffffffff')).toEqual(parent);
    expect(newHandoffTrace(null, 'ffffffffffffffffffffffffffffffff')).toMatchObject({
      traceId: 'ffffffffffffffffffffffffffffffff',
      spanId: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    const fresh = newHandoffTrace(null, null);
    expect(fresh.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(newHandoffTrace(null, null).traceId).not.toBe(fresh.traceId);
    expect(handoffTraceParent(parent)).toBe('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
  });
});

describe('trace context in NATS headers', () => {
  const exporter = new InMemorySpanExporter();
  let edge: RelayTracer;
  let tasks: RelayTracer;

  beforeAll(() => {
    useSpanExporterForTests(exporter);
    edge = startTracing('edge', OFF)!;
    tasks = startTracing('tasks', OFF)!;
  });

  afterAll(async () => {
    useSpanExporterForTests(null);
    await edge.shutdown();
    await tasks.shutdown();
  });

  beforeEach(() => exporter.reset());

  it('injects the client span as traceparent, and the handler extracts it as the parent of its server span', async () => {
    const headers = natsHeaders();
    headers.set('x-request-id', 'req-1');
    const request = startHttpServerSpan(edge, 'POST', '/a2a', {});
    await request.run(() =>
      traceNatsRequest('relay.tasks.v1.create', headers, async () => {
        runInServerSpan(tasks, 'relay.tasks.v1.create', headers, (handler) => handler!.end());
      }),
    );
    request.end();
    const [handler, client, server] = exporter.getFinishedSpans();
    expect(headers.get(TRACEPARENT_HEADER)).toBe(`00-${client.spanContext().traceId}-${client.spanContext().spanId}-01`);
    expect(headers.get('x-request-id')).toBe('req-1');
    expect([client.kind, handler.kind]).toEqual([SpanKind.CLIENT, SpanKind.SERVER]);
    expect(client.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(handler.parentSpanContext?.spanId).toBe(client.spanContext().spanId);
    expect(new Set([server, client, handler].map((span) => span.spanContext().traceId)).size).toBe(1);
    expect(handler.resource.attributes['service.name']).toBe('agentrelay-tasks');
    expect(client.resource.attributes['service.name']).toBe('agentrelay-edge');
  });

  it('keeps tracestate beside traceparent', () => {
    const incoming = natsHeaders();
    incoming.set(TRACEPARENT_HEADER, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    incoming.set('tracestate', 'vendor=abc');
    const parent = trace.getSpanContext(extractTraceHeaders(incoming));
    expect(parent).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', isRemote: true });
    expect(parent?.traceState?.get('vendor')).toBe('abc');
    const outgoing = natsHeaders();
    context.with(extractTraceHeaders(incoming), () => {
      runInServerSpan(tasks, 'relay.tasks.v1.get', incoming, (span) => {
        void traceNatsRequest('relay.directory.v1.resolve', outgoing, async () => undefined);
        span!.end();
      });
    });
    expect(outgoing.get(TRACEPARENT_HEADER)).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    expect(outgoing.get('tracestate')).toBe('vendor=abc');
  });

  it('a request without trace headers (an untraced caller) makes no span in the handler', () => {
    const seen = runInServerSpan(tasks, 'relay.tasks.v1.health', natsHeaders(), (span) => span);
    expect(seen).toBeUndefined();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('gives the traceparent of the active request to rows written now, and a later delivery attempt continues its trace', async () => {
    let written: string | null = null;
    const incoming = natsHeaders();
    incoming.set(TRACEPARENT_HEADER, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    runInServerSpan(tasks, 'relay.tasks.v1.send', incoming, (span) => {
      written = currentTraceParent();
      span!.end();
    });
    const [create] = exporter.getFinishedSpans();
    expect(written).toBe(`00-${create.spanContext().traceId}-${create.spanContext().spanId}-01`);
    const message = natsHeaders();
    message.set(TRACEPARENT_HEADER, written!);
    const deliveryHeaders: Record<string, string> = { 'content-type': 'application/json', ...traceLinkHeaders(message) };
    expect(deliveryHeaders[TRACEPARENT_HEADER]).toBe(written);
    await traceDeliveryAttempt(tasks, 'webhook', deliveryHeaders, async () => undefined);
    const attempt = exporter.getFinishedSpans()[1];
    expect(attempt.name).toBe('deliver webhook');
    expect(attempt.spanContext().traceId).toBe(create.spanContext().traceId);
    expect(attempt.parentSpanContext?.spanId).toBe(create.spanContext().spanId);
    expect(deliveryHeaders[TRACEPARENT_HEADER]).toBe(`00-${attempt.spanContext().traceId}-${attempt.spanContext().spanId}-01`);
  });

  it('publishes a handoff’s event in its trace: the request’s span when it is in it, else the handoff’s span, linked from the request', () => {
    const incoming = natsHeaders();
    incoming.set(TRACEPARENT_HEADER, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    const chain = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
    const written = runInServerSpan(tasks, 'relay.tasks.v1.transition', incoming, (span) => {
      const inOwnTrace = handoffTraceParent({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: '1111111111111111' });
      const inChain = handoffTraceParent(chain);
      span!.end();
      return { inOwnTrace, inChain };
    });
    const [request] = exporter.getFinishedSpans();
    expect(written.inOwnTrace).toBe(`00-0af7651916cd43dd8448eb211c80319c-${request.spanContext().spanId}-01`);
    expect(written.inChain).toBe('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    expect(request.links.map((link) => link.context)).toEqual([expect.objectContaining(chain)]);
  });

  it('ends a failed request span as an error naming the relay error', async () => {
    const failure = Object.assign(new Error('The tasks service did not answer in time'), { reason: 'service_timeout' });
    const request = startHttpServerSpan(edge, 'POST', '/a2a', {});
    await request.run(() => expect(traceNatsRequest('relay.tasks.v1.get', natsHeaders(), () => Promise.reject(failure))).rejects.toBe(failure));
    request.end();
    const [client] = exporter.getFinishedSpans();
    expect(client.status).toMatchObject({ code: 2, message: 'The tasks service did not answer in time' });
    expect(client.attributes['error.type']).toBe('service_timeout');
  });
});
