import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Writable } from 'node:stream';
import { useSpanExporterForTests } from '@app/tracing';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { createTask } from './support/tasks';
import { RelayHarness } from './support/relay-harness';
import { WebhookSink } from './support/webhook-sink';

const serviceOf = (span: ReadableSpan): unknown => span.resource.attributes['service.name'];
const idOf = (span: ReadableSpan): string => span.spanContext().spanId;
const traceOf = (span: ReadableSpan): string => span.spanContext().traceId;
const nanosOf = ([seconds, nanos]: [number, number]): bigint => BigInt(seconds) * 1_000_000_000n + BigInt(nanos);
/**
 * The SDK takes each span's start from Date.now() (whole milliseconds) and its end as that start
 * plus a precise duration, so the ends of two spans compare only to within a millisecond.
 */
const SPAN_CLOCK_RESOLUTION_NANOS = 1_000_000n;

describe('OpenTelemetry traces across the edge, NATS, the services and Postgres', () => {
  const exporter = new InMemorySpanExporter();
  const logLines: Record<string, unknown>[] = [];
  let relay: RelayHarness;
  let sink: WebhookSink;
  let sender: RegisteredTestAgent;
  let recipient: RegisteredTestAgent;

  /** The first finished span that `matches`; throws naming the spans seen so far (so `eventually` retries and reports). */
  function finishedSpan(description: string, matches: (span: ReadableSpan) => boolean): ReadableSpan {
    const spans = exporter.getFinishedSpans();
    const span = spans.find(matches);
    if (!span)
      throw new Error(`no ${description} among ${spans.length} finished spans: ${spans.map((seen) => `${String(serviceOf(seen))} ${seen.name}`).join(', ')}`);
    return span;
  }

  beforeAll(async () => {
    useSpanExporterForTests(exporter);
    sink = await WebhookSink.start();
    const logDestination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString().split('\n')) if (line.trim()) logLines.push(JSON.parse(line) as Record<string, unknown>);
        callback();
      },
    });
    // The edge asks the directory on every call (no cached identity), so the create's trace reaches it.
    relay = await RelayHarness.start({ env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_DIRECTORY_CACHE_MS: '0', LOG_LEVEL: 'debug' }, logDestination });
    sender = await registerAgent(relay, { handle: uniqueHandle('trace-s', 'acme'), name: 'Sender' });
    recipient = await registerAgent(relay, {
      handle: uniqueHandle('trace-r', 'acme'),
      name: 'Recipient',
      notification_webhook_url: sink.url('/recipient/hook'),
    });
  });

  afterAll(async () => {
    await relay?.stop();
    await sink?.stop();
    useSpanExporterForTests(null);
  });

  it('follows a create from the edge through directory and tasks into its queries, and its event’s delivery continues that trace', async () => {
    const taskId = await createTask(relay.url, sender, recipient);

    // The edge's server span of the call; its trace is the create's.
    const edgeSpan = await eventually(
      () =>
        finishedSpan(
          'edge span of the send',
          (span) => serviceOf(span) === 'agentrelay-edge' && span.kind === SpanKind.SERVER && span.attributes['rpc.method'] === 'send',
        ),
      30000,
    );
    expect(edgeSpan.name).toBe('POST /a2a');
    expect(edgeSpan.attributes['http.response.status_code']).toBe(200);
    expect(edgeSpan.parentSpanContext).toBeUndefined();
    const traceId = traceOf(edgeSpan);
    const inTrace = (): ReadableSpan[] => exporter.getFinishedSpans().filter((span) => traceOf(span) === traceId);

    // edge → directory: the client span of the authentication and the directory's server span under it.
    const authenticate = inTrace().find((span) => span.kind === SpanKind.CLIENT && span.name === 'relay.directory.v1.authenticate')!;
    expect(authenticate).toBeDefined();
    expect(serviceOf(authenticate)).toBe('agentrelay-edge');
    expect(authenticate.parentSpanContext?.spanId).toBe(idOf(edgeSpan));
    const directorySpan = inTrace().find((span) => serviceOf(span) === 'agentrelay-directory' && span.kind === SpanKind.SERVER)!;
    expect(directorySpan).toBeDefined();
    expect(directorySpan.name).toBe(`${relay.subjectPrefix}.relay.directory.v1.authenticate`);
    expect(directorySpan.parentSpanContext?.spanId).toBe(idOf(authenticate));

    // edge → tasks: the send request, the tasks service's span under it and its Postgres queries under that.
    const send = inTrace().find((span) => span.kind === SpanKind.CLIENT && span.name === 'relay.tasks.v1.send')!;
    expect(send).toBeDefined();
    expect(send.parentSpanContext?.spanId).toBe(idOf(edgeSpan));
    const tasksSpan = inTrace().find((span) => serviceOf(span) === 'agentrelay-tasks' && span.kind === SpanKind.SERVER)!;
    expect(tasksSpan).toBeDefined();
    expect(tasksSpan.parentSpanContext?.spanId).toBe(idOf(send));
    const queries = inTrace().filter((span) => span.attributes['db.system.name'] === 'postgresql');
    const tasksQueries = queries.filter((query) => serviceOf(query) === 'agentrelay-tasks');
    expect(tasksQueries.length).toBeGreaterThan(0);
    // Every query of the trace belongs to the span of the service that made it.
    const directorySpanIds = new Set(
      inTrace()
        .filter((span) => serviceOf(span) === 'agentrelay-directory' && span.kind === SpanKind.SERVER)
        .map(idOf),
    );
    for (const query of queries.filter((query) => serviceOf(query) === 'agentrelay-directory'))
      expect(directorySpanIds.has(query.parentSpanContext!.spanId)).toBe(true);
    expect(queries.every((query) => ['agentrelay-tasks', 'agentrelay-directory'].includes(serviceOf(query) as string))).toBe(true);
    for (const query of tasksQueries) {
      expect(query.parentSpanContext?.spanId).toBe(idOf(tasksSpan));
      expect(nanosOf(query.startTime)).toBeGreaterThanOrEqual(nanosOf(tasksSpan.startTime));
      expect(nanosOf(query.endTime)).toBeLessThanOrEqual(nanosOf(tasksSpan.endTime) + SPAN_CLOCK_RESOLUTION_NANOS);
    }
    const create = tasksQueries.find((query) => query.name === 'WITH tasks-create-task');
    expect(create?.attributes['db.query.text']).toContain('INSERT INTO "tasks"."tasks"');

    // The handler's log line carries the trace, as the edge's access line does.
    await eventually(() => {
      const handled = logLines.filter((line) => line.service === 'tasks' && line.msg === 'request handled' && line.trace_id === traceId);
      expect(handled.map((line) => line.span_id)).toEqual([idOf(tasksSpan)]);
      const accessLines = logLines.filter((line) => line.service === 'edge' && line.msg === 'request completed' && line.trace_id === traceId);
      expect(accessLines).toHaveLength(1);
    }, 30000);

    // The event's delivery continues the handoff's trace (a chain is one trace): a child of the
    // tasks span that wrote the event, and the receiver is handed the attempt's traceparent.
    const delivered = await eventually(() => {
      const received = sink.requests.filter((request) => request.path === '/recipient/hook' && request.body.includes(taskId));
      expect(received).toHaveLength(1);
      return received[0];
    }, 30000);
    const attempt = await eventually(
      () =>
        finishedSpan(
          'delivery attempt in the create’s trace',
          (span) => serviceOf(span) === 'agentrelay-notifier' && span.name === 'deliver webhook' && traceOf(span) === traceId,
        ),
      30000,
    );
    expect(attempt.parentSpanContext?.spanId).toBe(idOf(tasksSpan));
    expect(delivered.headers.traceparent).toBe(`00-${traceId}-${idOf(attempt)}-01`);
  });

  it('continues the trace of a caller that sends a traceparent', async () => {
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const response = await fetch(`${relay.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${sender.api_key}`, traceparent: `00-${callerTrace}-00f067aa0ba902b7-01` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} }),
    });
    expect(response.status).toBe(200);
    const edgeSpan = await eventually(
      () =>
        finishedSpan(
          'edge span in the caller’s trace',
          (span) => span.kind === SpanKind.SERVER && traceOf(span) === callerTrace && serviceOf(span) === 'agentrelay-edge',
        ),
      30000,
    );
    expect(edgeSpan.parentSpanContext).toMatchObject({ spanId: '00f067aa0ba902b7', isRemote: true });
    await eventually(
      () => finishedSpan('tasks span in the caller’s trace', (span) => serviceOf(span) === 'agentrelay-tasks' && traceOf(span) === callerTrace),
      30000,
    );
  });

  it('makes no trace of readiness and liveness probes', async () => {
    exporter.reset();
    expect((await fetch(`${relay.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${relay.url}/healthz`)).status).toBe(200);
    // The probe's answer waited for the services' health answers, so any span of it has ended by
    // now (a query only makes a span inside a request's span, so none of theirs can either).
    const probeSpans = exporter
      .getFinishedSpans()
      .filter((span) => span.name.endsWith('.health') || ['/readyz', '/healthz'].includes(String(span.attributes['http.route'])));
    expect(probeSpans.map((span) => `${String(serviceOf(span))} ${span.name}`)).toEqual([]);
  });
});
