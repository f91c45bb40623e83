import { Registry } from 'prom-client';
import { HttpMetrics } from './http.metrics';
import { NatsClientMetrics, NatsHandlerMetrics, natsClientOutcomeOf } from './nats.metrics';
import { CounterFamily, HistogramFamily } from './series';

describe('bound metric families', () => {
  it('expose counters and cumulative histogram buckets in the text format', async () => {
    const registry = new Registry();
    const counter = new CounterFamily(registry, 'demo_events_total', 'Demo events.', ['kind']);
    const histogram = new HistogramFamily(registry, 'demo_duration_seconds', 'Demo durations.', ['kind'], [0.1, 1]);
    const a = counter.bind('a');
    a.inc();
    a.inc(2);
    expect(counter.bind('a')).toBe(a);
    const timing = histogram.bind('a');
    for (const seconds of [0.05, 0.1, 0.5, 3]) timing.observe(seconds);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE demo_events_total counter\ndemo_events_total{kind="a"} 3');
    expect(text).toContain('demo_duration_seconds_bucket{kind="a",le="0.1"} 2');
    expect(text).toContain('demo_duration_seconds_bucket{kind="a",le="1"} 3');
    expect(text).toContain('demo_duration_seconds_bucket{kind="a",le="+Inf"} 4');
    expect(text).toContain('demo_duration_seconds_sum{kind="a"} 3.65');
    expect(text).toContain('demo_duration_seconds_count{kind="a"} 4');
  });

  it('refuses label values that do not match the label names', () => {
    const family = new CounterFamily(new Registry(), 'demo_total', 'Demo.', ['a', 'b']);
    expect(() => family.bind('only-one')).toThrow(/expected 2 label values/);
  });
});

describe('HttpMetrics', () => {
  it('counts unauthenticated and rate-limited answers as auth failures and rejections', async () => {
    const registry = new Registry();
    const http = new HttpMetrics(registry);
    http.observe('/a2a', 'send', 'agentrelay', 'ok', 200, 0.01);
    http.observe('/a2a', 'unknown', 'agentrelay', 'unauthenticated', 401, 0.001);
    http.observe('/a2a', 'send', 'agentrelay', 'rate_limited', 429, 0.002);
    http.observe('/admin/agents', 'POST', 'none', 'unauthenticated', 401, 0.001);
    http.rateLimitFailedOpen();
    http.streamOpened();
    const text = await registry.metrics();
    expect(text).toContain('agentrelay_http_requests_total{route="/a2a",method="send",dialect="agentrelay",outcome="ok",status_class="2xx"} 1');
    expect(text).toContain('agentrelay_auth_failures_total{route="/a2a"} 1');
    expect(text).toContain('agentrelay_auth_failures_total{route="/admin/agents"} 1');
    expect(text).toContain('agentrelay_rate_limit_rejections_total 1');
    expect(text).toContain('agentrelay_rate_limit_fail_open_total 1');
    expect(text).toContain('agentrelay_sse_streams_open 1');
  });
});

describe('NATS metrics', () => {
  it('tell timeouts, missing responders and error answers apart', () => {
    expect(natsClientOutcomeOf({ reason: 'service_timeout', message: 'x' })).toBe('timeout');
    expect(natsClientOutcomeOf({ reason: 'service_unavailable', message: 'The tasks service is unavailable (no responders on relay.tasks.v1.get)' })).toBe(
      'no_responders',
    );
    expect(natsClientOutcomeOf({ reason: 'service_unavailable', message: 'NATS request to the tasks service failed: closed' })).toBe('failed');
    expect(natsClientOutcomeOf({ reason: 'thread_not_found', message: 'x' })).toBe('error');
    expect(natsClientOutcomeOf(new Error('boom'))).toBe('failed');
  });

  it('time a request from the caller and pass its result or error through', async () => {
    const registry = new Registry();
    const client = new NatsClientMetrics(registry);
    await expect(client.timed('relay.tasks.v1.get', performance.now(), Promise.resolve('reply'))).resolves.toBe('reply');
    const timeout = Object.assign(new Error('late'), { reason: 'service_timeout' });
    await expect(client.timed('relay.tasks.v1.get', performance.now(), Promise.reject(timeout))).rejects.toBe(timeout);
    const text = await registry.metrics();
    expect(text).toContain('agentrelay_nats_client_requests_total{subject="relay.tasks.v1.get",outcome="ok"} 1');
    expect(text).toContain('agentrelay_nats_client_requests_total{subject="relay.tasks.v1.get",outcome="timeout"} 1');
    expect(text).toContain('agentrelay_nats_client_requests_total{subject="relay.tasks.v1.get",outcome="no_responders"} 0');
  });

  it('label handled requests by subject without the deployment prefix', async () => {
    const registry = new Registry();
    const handler = new NatsHandlerMetrics(registry, 'staging.eu');
    handler.handled('staging.eu.relay.tasks.v1.send', 'ok', performance.now());
    expect(await registry.metrics()).toContain('agentrelay_nats_handler_requests_total{subject="relay.tasks.v1.send",outcome="ok"} 1');
  });
});
