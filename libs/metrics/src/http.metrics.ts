import type { Registry } from 'prom-client';
import { Gauge } from 'prom-client';
import { CounterFamily, GaugeFamily, HistogramFamily, type HistogramSeries, type ValueSeries } from './series';

interface HttpSeries {
  requests: ValueSeries;
  duration: HistogramSeries;
}

type Branch<V> = Map<string, V>;

function branch<V>(map: Branch<Branch<V>>, key: string): Branch<V> {
  let next = map.get(key);
  if (!next) {
    next = new Map();
    map.set(key, next);
  }
  return next;
}

export function statusClass(statusCode: number): string {
  if (statusCode >= 500) return '5xx';
  if (statusCode >= 400) return '4xx';
  if (statusCode >= 300) return '3xx';
  return '2xx';
}

/** The outcome of a request that is not a JSON-RPC call (or failed before it was one), from its status. */
export function outcomeOfStatus(statusCode: number): string {
  if (statusCode < 400) return 'ok';
  if (statusCode === 401) return 'unauthenticated';
  if (statusCode === 404) return 'not_found';
  if (statusCode === 413) return 'payload_too_large';
  if (statusCode === 429) return 'rate_limited';
  return statusCode >= 500 ? 'server_error' : 'client_error';
}

/**
 * The edge's HTTP metrics. Labels stay bounded: the route is the route pattern (never a handle),
 * the method the canonical JSON-RPC method (or the HTTP verb outside JSON-RPC), the outcome `ok`
 * or an error reason of the relay's catalogue.
 */
export class HttpMetrics {
  private readonly requests: CounterFamily;
  private readonly duration: HistogramFamily;
  private readonly authFailures: CounterFamily;
  private readonly rateLimitRejections: ValueSeries;
  private readonly rateLimitFailOpen: ValueSeries;
  private readonly orgQuotaRejections: CounterFamily;
  private readonly sseStreams: ValueSeries;
  private readonly sseStreamsStalled: ValueSeries;
  private readonly chainRefusals: CounterFamily;
  private streamBuffers: () => number = () => 0;
  private keyFilter: () => { loaded: boolean; digests: number } = () => ({ loaded: false, digests: 0 });
  private readonly taskEventSubscriptions: ValueSeries;
  private readonly taskEventListeners: ValueSeries;
  private readonly series: Branch<Branch<Branch<Branch<Branch<HttpSeries>>>>> = new Map();

  constructor(registry: Registry) {
    this.requests = new CounterFamily(registry, 'agentrelay_http_requests_total', 'HTTP requests answered by the edge.', [
      'route',
      'method',
      'dialect',
      'outcome',
      'status_class',
    ]);
    this.duration = new HistogramFamily(
      registry,
      'agentrelay_http_request_duration_seconds',
      'Time from the request to the end of its response (a stream counts until it closes).',
      ['route', 'method', 'dialect', 'status_class'],
    );
    this.authFailures = new CounterFamily(registry, 'agentrelay_auth_failures_total', 'Requests refused for a missing or bad API key or admin token.', [
      'route',
    ]);
    this.rateLimitRejections = new CounterFamily(
      registry,
      'agentrelay_rate_limit_rejections_total',
      'Calls refused by the per-agent rate limit (HTTP 429).',
    ).bind();
    this.orgQuotaRejections = new CounterFamily(
      registry,
      'agentrelay_org_quota_rejections_total',
      'Calls refused because their org was at one of its quotas.',
      ['org', 'quota'],
    );
    this.rateLimitFailOpen = new CounterFamily(
      registry,
      'agentrelay_rate_limit_fail_open_total',
      'Calls let through without a rate-limit decision because the rate-limit store was unavailable.',
    ).bind();
    this.sseStreams = new GaugeFamily(registry, 'agentrelay_sse_streams_open', 'A2A Server-Sent Event streams open right now.').bind();
    const streamBuffers = (): number => this.streamBuffers();
    new Gauge({
      name: 'agentrelay_sse_buffered_bytes',
      help: "Bytes of events the edge's open streams hold unsent (their queues and socket write buffers).",
      registers: [registry],
      collect() {
        this.set(streamBuffers());
      },
    });
    const keyFilter = (): { loaded: boolean; digests: number } => this.keyFilter();
    new Gauge({
      name: 'agentrelay_key_filter_loaded',
      help: "1 while the edge holds the key filter bucket's digests of live API keys and follows it; 0 while it falls back to the keys it accepted before.",
      registers: [registry],
      collect() {
        this.set(keyFilter().loaded ? 1 : 0);
      },
    });
    new Gauge({
      name: 'agentrelay_key_filter_digests',
      help: 'Digests of live API keys the edge holds from the key filter bucket.',
      registers: [registry],
      collect() {
        this.set(keyFilter().digests);
      },
    });
    this.sseStreamsStalled = new CounterFamily(
      registry,
      'agentrelay_sse_streams_stalled_total',
      'Streams closed because their client stopped reading (its socket stayed full for RELAY_STREAM_STALL_MS).',
    ).bind();
    this.chainRefusals = new CounterFamily(
      registry,
      'agentrelay_chain_refusals_total',
      'Handoffs the chain bounds refused (docs/chains.md), by reason: chain_depth_exceeded, chain_cycle, chain_budget_exhausted, pair_rate_limited.',
      ['reason'],
    );
    this.taskEventSubscriptions = new GaugeFamily(
      registry,
      'agentrelay_task_event_subscriptions',
      'NATS subscriptions the edge holds to task events for its streams (1 while any stream or blocking send listens, and for 2 s after the last one, else 0).',
    ).bind();
    this.taskEventListeners = new GaugeFamily(
      registry,
      'agentrelay_task_event_listeners',
      'Streams listening to task events (per task or per agent) right now.',
    ).bind();
  }

  /** One answered request. `seconds` is its duration; `statusCode` the HTTP status it got. */
  observe(route: string, method: string, dialect: string, outcome: string, statusCode: number, seconds: number): void {
    const byOutcome = branch(branch(branch(this.series, route), method), dialect);
    const klass = statusClass(statusCode);
    let byStatus = byOutcome.get(outcome);
    if (!byStatus) {
      byStatus = new Map();
      byOutcome.set(outcome, byStatus);
    }
    let series = byStatus.get(klass);
    if (!series) {
      series = { requests: this.requests.bind(route, method, dialect, outcome, klass), duration: this.duration.bind(route, method, dialect, klass) };
      byStatus.set(klass, series);
    }
    series.requests.inc();
    series.duration.observe(seconds);
    if (outcome === 'unauthenticated') this.authFailures.bind(route).inc();
    else if (outcome === 'rate_limited') this.rateLimitRejections.inc();
  }

  /** Makes the series of a chain refusal reason exist (at 0) before the first refusal. */
  declareChainRefusal(reason: string): void {
    this.chainRefusals.bind(reason);
  }

  /** One handoff the chain bounds refused with `reason`. */
  chainRefused(reason: string): void {
    this.chainRefusals.bind(reason).inc();
  }

  /** A call refused at its org's quota (docs/orgs.md#quotas). */
  orgQuotaRejected(org: string, quota: string): void {
    this.orgQuotaRejections.bind(org, quota).inc();
  }

  rateLimitFailedOpen(): void {
    this.rateLimitFailOpen.inc();
  }

  streamOpened(): void {
    this.sseStreams.inc();
  }

  streamClosed(): void {
    this.sseStreams.dec();
  }

  streamStalled(): void {
    this.sseStreamsStalled.inc();
  }

  /** Reads, when scraped, what the open streams hold unsent. */
  watchStreamBuffers(read: () => number): void {
    this.streamBuffers = read;
  }

  /** Reads, when scraped, the state of the edge's key filter. */
  watchKeyFilter(read: () => { loaded: boolean; digests: number }): void {
    this.keyFilter = read;
  }

  /** What the edge's task event feed holds: its NATS subscriptions and the streams listening to it. */
  taskEventFeed(subscriptions: number, listeners: number): void {
    this.taskEventSubscriptions.value = subscriptions;
    this.taskEventListeners.value = listeners;
  }
}
