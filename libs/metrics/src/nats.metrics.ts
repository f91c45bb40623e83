import type { Registry } from 'prom-client';
import { CounterFamily, HistogramFamily, type HistogramSeries, type ValueSeries } from './series';

interface OutcomeSeries {
  requests: ValueSeries;
  duration: HistogramSeries;
}

/** What a caller saw of one request: an answer, an error answer, a timeout, nobody listening, or a broken connection. */
export const NATS_CLIENT_OUTCOMES = ['ok', 'error', 'timeout', 'no_responders', 'failed'] as const;
export type NatsClientOutcome = (typeof NATS_CLIENT_OUTCOMES)[number];

export const NATS_HANDLER_OUTCOMES = ['ok', 'error'] as const;
export type NatsHandlerOutcome = (typeof NATS_HANDLER_OUTCOMES)[number];

function bindOutcomes<O extends string>(requests: CounterFamily, duration: HistogramFamily, subject: string, outcomes: readonly O[]): Record<O, OutcomeSeries> {
  const bound = {} as Record<O, OutcomeSeries>;
  for (const outcome of outcomes) bound[outcome] = { requests: requests.bind(subject, outcome), duration: duration.bind(subject, outcome) };
  return bound;
}

/** The caller's outcome of a failed request, from the relay error it became. */
export function natsClientOutcomeOf(error: unknown): NatsClientOutcome {
  const reason = (error as { reason?: unknown } | null)?.reason;
  if (reason === 'service_timeout') return 'timeout';
  if (reason === 'service_unavailable') {
    return String((error as Error).message).includes('no responders') ? 'no_responders' : 'failed';
  }
  return reason === undefined ? 'failed' : 'error';
}

/** NATS request-reply as the caller (the edge) sees it, by subject (without the deployment's prefix). */
export class NatsClientMetrics {
  private readonly requests: CounterFamily;
  private readonly duration: HistogramFamily;
  private readonly bySubject = new Map<string, Record<NatsClientOutcome, OutcomeSeries>>();

  constructor(registry: Registry) {
    this.requests = new CounterFamily(registry, 'agentrelay_nats_client_requests_total', 'NATS requests made, by subject and outcome.', ['subject', 'outcome']);
    this.duration = new HistogramFamily(
      registry,
      'agentrelay_nats_client_request_duration_seconds',
      'Time from a NATS request to its reply (or failure), seen by the caller.',
      ['subject', 'outcome'],
    );
  }

  /**
   * Resolves or rejects as `reply` does, recording the request's outcome and the time since
   * `startedAt` (a `performance.now()` taken before the request was sent).
   */
  async timed<T>(subject: string, startedAt: number, reply: Promise<T>): Promise<T> {
    const series = this.seriesOf(subject);
    try {
      const value = await reply;
      this.record(series.ok, startedAt);
      return value;
    } catch (error) {
      this.record(series[natsClientOutcomeOf(error)], startedAt);
      throw error;
    }
  }

  private record(series: OutcomeSeries, startedAt: number): void {
    series.requests.inc();
    series.duration.observe((performance.now() - startedAt) / 1000);
  }

  private seriesOf(subject: string): Record<NatsClientOutcome, OutcomeSeries> {
    let series = this.bySubject.get(subject);
    if (!series) {
      series = bindOutcomes(this.requests, this.duration, subject, NATS_CLIENT_OUTCOMES);
      this.bySubject.set(subject, series);
    }
    return series;
  }
}

/**
 * NATS requests as a service's handlers see them, by subject without the deployment's prefix
 * (the handler is given the subject as received, prefixed).
 */
export class NatsHandlerMetrics {
  private readonly requests: CounterFamily;
  private readonly duration: HistogramFamily;
  private readonly bySubject = new Map<string, Record<NatsHandlerOutcome, OutcomeSeries>>();
  private readonly prefixLength: number;

  constructor(registry: Registry, subjectPrefix = '') {
    this.prefixLength = subjectPrefix ? subjectPrefix.length + 1 : 0;
    this.requests = new CounterFamily(registry, 'agentrelay_nats_handler_requests_total', 'NATS requests handled, by subject and outcome.', [
      'subject',
      'outcome',
    ]);
    this.duration = new HistogramFamily(registry, 'agentrelay_nats_handler_duration_seconds', 'Time a service spent handling one NATS request.', [
      'subject',
      'outcome',
    ]);
  }

  /** One handled request on `receivedSubject`, begun at `startedAt` (`performance.now()`). */
  handled(receivedSubject: string, outcome: NatsHandlerOutcome, startedAt: number): void {
    let series = this.bySubject.get(receivedSubject);
    if (!series) {
      series = bindOutcomes(this.requests, this.duration, receivedSubject.slice(this.prefixLength), NATS_HANDLER_OUTCOMES);
      this.bySubject.set(receivedSubject, series);
    }
    const bound = series[outcome];
    bound.requests.inc();
    bound.duration.observe((performance.now() - startedAt) / 1000);
  }
}
