import { Gauge, type Registry } from 'prom-client';
import { CounterFamily, HistogramFamily } from '@app/metrics';
import type { UpstreamCallMethod, UpstreamCallOutcome } from '@app/contracts';

/** Seconds until an upstream's answer headers: a card or a poll takes milliseconds, a SendMessage may wait on the timeout. */
const UPSTREAM_CALL_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const BREAKER_STATES = ['closed', 'half_open', 'open'] as const;
export type UpstreamBreakerState = (typeof BREAKER_STATES)[number];

/** One registered upstream agent as the gauges show it at a scrape. */
export interface UpstreamGaugeRow {
  agent: string;
  breaker: UpstreamBreakerState;
  pending: boolean;
}

/**
 * Per-upstream metrics of the notifier, labelled with the agent's handle (bounded: only registered
 * upstream agents): call latency by A2A method, failed calls by method and kind, the circuit
 * breaker of the agent's host, and whether a card change waits for an operator.
 */
export class UpstreamMetrics {
  private readonly duration: HistogramFamily;
  private readonly errors: CounterFamily;
  private source: () => Promise<UpstreamGaugeRow[]> = async () => [];

  constructor(registry: Registry) {
    this.duration = new HistogramFamily(
      registry,
      'agentrelay_upstream_call_duration_seconds',
      "Time until an upstream agent's server answered (headers), by agent and A2A method (GetAgentCard, SendMessage, GetTask, …), failures included.",
      ['agent', 'method'],
      UPSTREAM_CALL_BUCKETS_SECONDS,
    );
    this.errors = new CounterFamily(
      registry,
      'agentrelay_upstream_call_errors_total',
      'Upstream calls that failed, by agent, A2A method and kind (refused, timeout, tls, connection, unauthorized, http_4xx, http_5xx, a2a_error, too_large).',
      ['agent', 'method', 'kind'],
    );
    const rows = (): Promise<UpstreamGaugeRow[]> => this.source().catch(() => []);
    new Gauge({
      name: 'agentrelay_upstream_breaker_state',
      help: "The circuit breaker of each upstream agent's host and port in this process: 1 for its state (closed, half_open, open), 0 for the others.",
      labelNames: ['agent', 'state'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const row of await rows()) for (const state of BREAKER_STATES) this.set({ agent: row.agent, state }, row.breaker === state ? 1 : 0);
      },
    });
    new Gauge({
      name: 'agentrelay_upstream_card_change_pending',
      help: "1 while a change of the upstream agent's card (URL, interface, protocol version, security) waits for an operator to accept or reject it.",
      labelNames: ['agent'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const row of await rows()) this.set({ agent: row.agent }, row.pending ? 1 : 0);
      },
    });
  }

  watch(source: () => Promise<UpstreamGaugeRow[]>): void {
    this.source = source;
  }

  call(agent: string, method: UpstreamCallMethod, outcome: UpstreamCallOutcome, seconds: number): void {
    this.duration.bind(agent, method).observe(seconds);
    if (outcome !== 'ok') this.errors.bind(agent, method, outcome).inc();
  }
}
