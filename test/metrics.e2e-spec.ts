import type { INestApplicationContext } from '@nestjs/common';
import { MetricsServer } from '@app/metrics';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { createTask } from './support/tasks';
import { ok, rpc } from './support/json-rpc';
import { parsePrometheusText, PrometheusScrape } from './support/prometheus-text';
import { RelayHarness, type ServiceName } from './support/relay-harness';
import { WebhookSink } from './support/webhook-sink';

type Process = 'edge' | ServiceName;
const PROCESSES: Process[] = ['edge', 'directory', 'tasks', 'notifier'];

describe('Prometheus metrics of the four processes', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let sender: RegisteredTestAgent;
  let recipient: RegisteredTestAgent;

  function appOf(process: Process): INestApplicationContext {
    return process === 'edge' ? relay.edge : relay.services.get(process)![0];
  }

  async function scrape(process: Process): Promise<PrometheusScrape> {
    const response = await fetch(`${appOf(process).get(MetricsServer).url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return PrometheusScrape.parse(await response.text());
  }

  async function scrapeAll(): Promise<Record<Process, PrometheusScrape>> {
    const scrapes = await Promise.all(PROCESSES.map((process) => scrape(process)));
    return Object.fromEntries(PROCESSES.map((process, index) => [process, scrapes[index]])) as Record<Process, PrometheusScrape>;
  }

  beforeAll(async () => {
    sink = await WebhookSink.start();
    // The sender's webhook always fails: its deliveries are retried once, then become dead letters.
    sink.plan('/sender/hook', [{ status: 500 }]);
    // Every call asks the directory (no edge cache), so the request counts below do not depend on timing.
    relay = await RelayHarness.start({
      env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms', RELAY_WEBHOOK_TIMEOUT_MS: '2000', RELAY_DIRECTORY_CACHE_MS: '0' },
    });
    sender = await registerAgent(relay, { handle: uniqueHandle('metrics-s', 'acme'), name: 'Sender', notification_webhook_url: sink.url('/sender/hook') });
    recipient = await registerAgent(relay, {
      handle: uniqueHandle('metrics-r', 'acme'),
      name: 'Recipient',
      notification_webhook_url: sink.url('/recipient/hook'),
    });
  });

  afterAll(async () => {
    await relay?.stop();
    await sink?.stop();
  });

  it('serves /metrics, /healthz and /readyz on the metrics port, and no metrics on the edge port', async () => {
    const metricsUrl = relay.edge.get(MetricsServer).url;
    expect((await fetch(`${metricsUrl}/other`)).status).toBe(404);
    expect((await fetch(`${metricsUrl}/healthz`)).status).toBe(200);
    const tasksReady = await fetch(`${appOf('tasks').get(MetricsServer).url}/readyz`);
    expect([tasksReady.status, await tasksReady.text()]).toEqual([200, 'ready\n']);
    expect((await fetch(`${metricsUrl}/metrics`, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${relay.url}/metrics`)).status).toBe(404);
  });

  it('counts a handoff’s life in every process by the right amounts', async () => {
    // Let the agent events of the registrations settle, so the baseline holds nothing in flight.
    await eventually(async () => expect((await scrape('directory')).value('agentrelay_outbox_backlog_events')).toBe(0), 30000);
    const before = await scrapeAll();

    const taskId = await createTask(relay.url, sender, recipient);
    await ok(relay.url, recipient.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
    await ok(relay.url, recipient.api_key, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'Done.' });
    const refused = await rpc(relay.url, `ah_live_${'A'.repeat(32)}`, 'tasks/get', { task_id: taskId });
    expect(refused.status).toBe(401);

    // Three task events: created (to the recipient: delivered), accepted and completed (to the
    // sender: failed once, then dead). Wait until the notifier has given up on both.
    const after = await eventually(
      async () => {
        const now = await scrapeAll();
        expect(
          now.notifier.value('agentrelay_delivery_dead_letters_total', { channel: 'webhook' }) -
            before.notifier.value('agentrelay_delivery_dead_letters_total', { channel: 'webhook' }),
        ).toBe(2);
        expect(now.tasks.value('agentrelay_outbox_backlog_events')).toBe(0);
        expect(now.notifier.value('agentrelay_jetstream_consumer_ack_pending_messages', { consumer: 'notifier' })).toBe(0);
        return now;
      },
      45000,
      200,
    );
    const delta = (process: Process, name: string, labels: Record<string, string> = {}): number =>
      after[process].value(name, labels) - before[process].value(name, labels);

    // edge: HTTP requests by route, canonical method, dialect and outcome
    const a2a = { route: '/a2a', dialect: 'agentrelay' };
    expect(delta('edge', 'agentrelay_http_requests_total', { ...a2a, method: 'send', outcome: 'ok', status_class: '2xx' })).toBe(1);
    expect(delta('edge', 'agentrelay_http_requests_total', { ...a2a, method: 'update', outcome: 'ok', status_class: '2xx' })).toBe(2);
    expect(delta('edge', 'agentrelay_http_requests_total', { ...a2a, outcome: 'unauthenticated', status_class: '4xx' })).toBe(1);
    expect(delta('edge', 'agentrelay_http_requests_total', { route: '/a2a' })).toBe(4);
    expect(delta('edge', 'agentrelay_http_request_duration_seconds_count', { ...a2a, method: 'update', status_class: '2xx' })).toBe(2);
    expect(delta('edge', 'agentrelay_http_request_duration_seconds_bucket', { ...a2a, method: 'update', status_class: '2xx', le: '+Inf' })).toBe(2);
    expect(delta('edge', 'agentrelay_auth_failures_total', { route: '/a2a' })).toBe(1);
    expect(delta('edge', 'agentrelay_rate_limit_rejections_total')).toBe(0);
    expect(delta('edge', 'agentrelay_rate_limit_fail_open_total')).toBe(0);
    expect(after.edge.value('agentrelay_sse_streams_open')).toBe(0);

    // edge as the NATS caller; directory and tasks as the handlers of the same requests
    const client = (subject: string, outcome: string): number => delta('edge', 'agentrelay_nats_client_requests_total', { subject, outcome });
    expect(client('relay.directory.v1.authenticate', 'ok')).toBe(3);
    expect(client('relay.directory.v1.authenticate', 'error')).toBe(1);
    expect(client('relay.directory.v1.admit', 'ok')).toBe(1);
    expect(client('relay.tasks.v1.send', 'ok')).toBe(1);
    expect(client('relay.tasks.v1.transition', 'ok')).toBe(2);
    expect(delta('edge', 'agentrelay_nats_client_requests_total', { outcome: 'timeout' })).toBe(0);
    expect(delta('edge', 'agentrelay_nats_client_request_duration_seconds_count', { subject: 'relay.tasks.v1.transition', outcome: 'ok' })).toBe(2);
    const handled = (process: Process, subject: string, outcome: string): number =>
      delta(process, 'agentrelay_nats_handler_requests_total', { subject, outcome });
    expect(handled('directory', 'relay.directory.v1.authenticate', 'ok')).toBe(3);
    expect(handled('directory', 'relay.directory.v1.authenticate', 'error')).toBe(1);
    expect(handled('directory', 'relay.directory.v1.admit', 'ok')).toBe(1);
    expect(handled('tasks', 'relay.tasks.v1.send', 'ok')).toBe(1);
    expect(handled('tasks', 'relay.tasks.v1.transition', 'ok')).toBe(2);
    expect(delta('tasks', 'agentrelay_nats_handler_duration_seconds_count', { subject: 'relay.tasks.v1.transition', outcome: 'ok' })).toBe(2);

    // tasks: the outbox drained; notifier: deliveries by channel and state, attempts and their latency
    expect(after.tasks.value('agentrelay_outbox_oldest_unpublished_age_seconds')).toBe(0);
    const deliveries = (state: string): number => delta('notifier', 'agentrelay_deliveries_total', { channel: 'webhook', state });
    expect([deliveries('pending'), deliveries('succeeded'), deliveries('failed'), deliveries('dead')]).toEqual([3, 1, 2, 2]);
    expect(delta('notifier', 'agentrelay_delivery_attempts_total', { channel: 'webhook' })).toBe(5);
    expect(delta('notifier', 'agentrelay_delivery_attempt_duration_seconds_count', { channel: 'webhook', state: 'dead' })).toBe(2);
    expect(sink.to('/recipient/hook')).toHaveLength(1);
    expect(sink.to('/sender/hook')).toHaveLength(4);
    expect(after.notifier.value('agentrelay_jetstream_consumer_pending_messages', { consumer: 'notifier' })).toBe(0);
  });

  it('exposes the default process metrics and the Postgres pool of each service', async () => {
    const scrapes = await scrapeAll();
    for (const process of PROCESSES) {
      expect(scrapes[process].has('process_cpu_user_seconds_total')).toBe(true);
      expect(scrapes[process].has('nodejs_eventloop_lag_seconds')).toBe(true);
    }
    for (const service of ['directory', 'tasks', 'notifier'] as const) {
      const pool = scrapes[service];
      expect(pool.value('agentrelay_db_pool_connections_in_use') + pool.value('agentrelay_db_pool_connections_idle')).toBeGreaterThan(0);
      expect(pool.value('agentrelay_db_pool_waiting_requests')).toBe(0);
    }
    expect(scrapes.edge.has('agentrelay_db_pool_connections_idle')).toBe(false);
  });

  it('parses with a parser that refuses what is not the text format', () => {
    const families = parsePrometheusText('# HELP a_total A "help" \\\\ text\n# TYPE a_total counter\na_total{x="q\\"uote",y="2"} 3 1700000000000\n');
    expect(families.get('a_total')).toEqual({
      name: 'a_total',
      type: 'counter',
      help: 'A "help" \\ text',
      samples: [{ name: 'a_total', labels: { x: 'q"uote', y: '2' }, value: 3 }],
    });
    expect(() => parsePrometheusText('b_total 1\n')).toThrow(/undeclared/);
    expect(() => parsePrometheusText('# TYPE c gauge\nc{x=1} 1\n')).toThrow(/not quoted/);
    expect(() => parsePrometheusText('# TYPE c gauge\nc one\n')).toThrow(/not a number/);
    expect(() => parsePrometheusText('# TYPE c gauge\nc 1\nc 2\n')).toThrow(/duplicate/);
  });
});
