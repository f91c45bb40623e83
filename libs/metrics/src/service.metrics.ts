import { Gauge, type Registry } from 'prom-client';
import { CounterFamily, GaugeFamily, HistogramFamily, LATENCY_BUCKETS_SECONDS, type ValueSeries } from './series';

/** A connection pool as pg's `Pool` reports it. */
export interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/** The service's Postgres pool, read when scraped. */
export class PostgresPoolMetrics {
  private pool: () => PoolCounts | undefined = () => undefined;

  constructor(registry: Registry) {
    const pool = (): PoolCounts | undefined => this.pool();
    new Gauge({
      name: 'agentrelay_db_pool_connections_in_use',
      help: 'Postgres connections checked out of the pool.',
      registers: [registry],
      collect() {
        const counts = pool();
        if (counts) this.set(counts.totalCount - counts.idleCount);
      },
    });
    new Gauge({
      name: 'agentrelay_db_pool_connections_idle',
      help: 'Open Postgres connections idle in the pool.',
      registers: [registry],
      collect() {
        const counts = pool();
        if (counts) this.set(counts.idleCount);
      },
    });
    new Gauge({
      name: 'agentrelay_db_pool_waiting_requests',
      help: 'Queries waiting for a pool connection.',
      registers: [registry],
      collect() {
        const counts = pool();
        if (counts) this.set(counts.waitingCount);
      },
    });
  }

  watch(pool: () => PoolCounts | undefined): void {
    this.pool = pool;
  }
}

/**
 * One read shared by the gauges of a scrape (they are collected together): a value read less than
 * a second ago is reused; a failed read leaves the gauges as they were.
 */
class SharedRead<T> {
  private reading: Promise<T | undefined> = Promise.resolve(undefined);
  private readAt = -Infinity;

  constructor(private readonly source: () => Promise<T | undefined>) {}

  get(): Promise<T | undefined> {
    const now = performance.now();
    if (now - this.readAt > 1000) {
      this.readAt = now;
      this.reading = this.source().catch(() => undefined);
    }
    return this.reading;
  }
}

export interface OutboxBacklog {
  events: number;
  oldestAgeSeconds: number;
}

/** The service's transactional outbox: events not yet published to JetStream, and how old the oldest is. */
export class OutboxMetrics {
  private source: () => Promise<OutboxBacklog | undefined> = async () => undefined;

  constructor(registry: Registry) {
    const backlog = new SharedRead(() => this.source());
    new Gauge({
      name: 'agentrelay_outbox_backlog_events',
      help: 'Outbox events written but not yet published to JetStream.',
      registers: [registry],
      async collect() {
        const read = await backlog.get();
        if (read) this.set(read.events);
      },
    });
    new Gauge({
      name: 'agentrelay_outbox_oldest_unpublished_age_seconds',
      help: 'Age of the oldest outbox event not yet published (0 when none waits).',
      registers: [registry],
      async collect() {
        const read = await backlog.get();
        if (read) this.set(read.oldestAgeSeconds);
      },
    });
  }

  watch(source: () => Promise<OutboxBacklog>): void {
    this.source = source;
  }
}

export interface ConsumerLag {
  pending: number;
  ackPending: number;
}

/** The durable JetStream consumer's lag, asked of the server when scraped. */
export class JetStreamConsumerMetrics {
  private consumer = '';
  private source: () => Promise<ConsumerLag | undefined> = async () => undefined;

  constructor(registry: Registry) {
    const lag = new SharedRead(() => this.source());
    const consumer = (): string => this.consumer;
    new Gauge({
      name: 'agentrelay_jetstream_consumer_pending_messages',
      help: 'Messages in the stream the durable consumer has not been given yet.',
      labelNames: ['consumer'],
      registers: [registry],
      async collect() {
        const read = await lag.get();
        if (read) this.set({ consumer: consumer() }, read.pending);
      },
    });
    new Gauge({
      name: 'agentrelay_jetstream_consumer_ack_pending_messages',
      help: 'Messages given to the durable consumer and not acknowledged yet.',
      labelNames: ['consumer'],
      registers: [registry],
      async collect() {
        const read = await lag.get();
        if (read) this.set({ consumer: consumer() }, read.ackPending);
      },
    });
  }

  watch(consumer: string, source: () => Promise<ConsumerLag | undefined>): void {
    this.consumer = consumer;
    this.source = source;
  }
}

/** Delivery states a delivery enters (`pending` when recorded). */
export const DELIVERY_STATES = ['pending', 'succeeded', 'failed', 'dead'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** Buckets (seconds) for outbound webhook calls: up to their timeout. */
const ATTEMPT_BUCKETS_SECONDS = [...LATENCY_BUCKETS_SECONDS.filter((bound) => bound >= 0.005), 60];

/** The notifier's deliveries (webhook, Slack, A2A push) by channel and state, attempts and dead letters. */
export class DeliveryMetrics {
  private readonly deliveries: CounterFamily;
  private readonly deadLetters: CounterFamily;
  private readonly attempts: CounterFamily;
  private readonly attemptDuration: HistogramFamily;
  private readonly breakersOpen: ValueSeries;
  private readonly breakersHalfOpen: ValueSeries;
  private readonly breakerTransitions: CounterFamily;
  private readonly breakerDeferrals: ValueSeries;
  private readonly feedBehind: ValueSeries;

  constructor(registry: Registry, channels: readonly string[]) {
    const breakers = new GaugeFamily(
      registry,
      'agentrelay_delivery_breakers',
      'Destinations (host and port) whose circuit breaker is open (nothing sent) or half-open (one probe), in this process.',
      ['state'],
    );
    this.breakersOpen = breakers.bind('open');
    this.breakersHalfOpen = breakers.bind('half_open');
    this.breakerTransitions = new CounterFamily(
      registry,
      'agentrelay_delivery_breaker_transitions_total',
      'Circuit breaker changes of a destination, by the state entered.',
      ['to'],
    );
    for (const state of ['open', 'half_open', 'closed']) this.breakerTransitions.bind(state);
    this.breakerDeferrals = new CounterFamily(
      registry,
      'agentrelay_delivery_breaker_deferrals_total',
      'Due deliveries moved to after their destination breaker window, without an attempt.',
    ).bind();
    this.feedBehind = new CounterFamily(
      registry,
      'agentrelay_notifier_feed_behind_events_total',
      "Task events handed back for redelivery because this process's push-config feed had not read the stream up to them in RELAY_NOTIFIER_FEED_WAIT_MS.",
    ).bind();
    this.deliveries = new CounterFamily(
      registry,
      'agentrelay_deliveries_total',
      'Deliveries entering a state: pending when recorded, then succeeded, failed (retry scheduled) or dead.',
      ['channel', 'state'],
    );
    this.deadLetters = new CounterFamily(registry, 'agentrelay_delivery_dead_letters_total', 'Deliveries given up after their last attempt.', ['channel']);
    this.attempts = new CounterFamily(
      registry,
      'agentrelay_delivery_attempts_total',
      'Delivery attempts, by channel and the state they left the delivery in.',
      ['channel', 'state'],
    );
    this.attemptDuration = new HistogramFamily(
      registry,
      'agentrelay_delivery_attempt_duration_seconds',
      'Time of one delivery attempt (the outbound HTTP call).',
      ['channel', 'state'],
      ATTEMPT_BUCKETS_SECONDS,
    );
    for (const channel of channels) {
      this.deadLetters.bind(channel);
      for (const state of DELIVERY_STATES) {
        this.deliveries.bind(channel, state);
        if (state !== 'pending') {
          this.attempts.bind(channel, state);
          this.attemptDuration.bind(channel, state);
        }
      }
    }
  }

  recorded(channel: string, count = 1): void {
    this.deliveries.bind(channel, 'pending').inc(count);
  }

  /** How many destinations have their breaker open or half-open right now. */
  breakers(counts: { open: number; half_open: number }): void {
    this.breakersOpen.value = counts.open;
    this.breakersHalfOpen.value = counts.half_open;
  }

  breakerTransition(to: 'open' | 'half_open' | 'closed'): void {
    this.breakerTransitions.bind(to).inc();
  }

  deferredByBreaker(count: number): void {
    this.breakerDeferrals.inc(count);
  }

  /** Task events not planned yet: the push configs set before them may not all be known here (redelivered). */
  aheadOfFeed(count: number): void {
    this.feedBehind.inc(count);
  }

  /** A delivery given up without an attempt: its destination's breaker held it for longer than the retry schedule spans. */
  expiredHeld(channel: string): void {
    this.deliveries.bind(channel, 'dead').inc();
    this.deadLetters.bind(channel).inc();
  }

  attempted(channel: string, state: Exclude<DeliveryState, 'pending'>, seconds: number): void {
    this.attempts.bind(channel, state).inc();
    this.attemptDuration.bind(channel, state).observe(seconds);
    this.deliveries.bind(channel, state).inc();
    if (state === 'dead') this.deadLetters.bind(channel).inc();
  }
}

/** Rows the retention deleted because they were past their window (docs/architecture.md#retention). */
export class RetentionMetrics {
  private readonly deletedRows: CounterFamily;

  constructor(registry: Registry) {
    this.deletedRows = new CounterFamily(registry, 'agentrelay_retention_deleted_rows_total', 'Rows deleted because they were past their retention window.', [
      'table',
    ]);
  }

  /** Shows the tables' series from the start, at 0, so that a rate over them exists before the first delete. */
  tables(tables: readonly string[]): void {
    for (const table of tables) this.deletedRows.bind(table);
  }

  deleted(table: string, rows: number): void {
    this.deletedRows.bind(table).inc(rows);
  }
}

/** The refusals at an org's quota (docs/orgs.md#quotas) of the directory (agents) and the tasks service (open handoffs); the edge counts its own under the same name. */
export class OrgQuotaMetrics {
  private readonly rejections: CounterFamily;
  private readonly upstreamInFlight: GaugeFamily;

  constructor(registry: Registry) {
    this.rejections = new CounterFamily(registry, 'agentrelay_org_quota_rejections_total', 'Requests refused because their org was at one of its quotas.', [
      'org',
      'quota',
    ]);
    this.upstreamInFlight = new GaugeFamily(
      registry,
      'agentrelay_org_upstream_in_flight',
      'Deliveries to the upstream agents of an org with an upstream_in_flight quota that this notifier process attempts now (more wait at the quota).',
      ['org'],
    );
  }

  rejected(org: string, quota: string): void {
    this.rejections.bind(org, quota).inc();
  }

  /** The org's upstream deliveries in flight in this process (orgs with the quota only). */
  upstreamDeliveriesInFlight(org: string, count: number): void {
    this.upstreamInFlight.bind(org).value = count;
  }
}
