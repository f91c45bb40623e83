import type { Metric, Registry } from 'prom-client';

type Labels = Record<string, string>;

/** One labelled time series of a counter or gauge: a plain number, bumped without any lookup. */
export class ValueSeries {
  value = 0;

  constructor(readonly labels: Labels) {}

  inc(by = 1): void {
    this.value += by;
  }

  dec(by = 1): void {
    this.value -= by;
  }
}

/** One labelled histogram series: counts per bucket (not cumulative until exposed), sum and count. */
export class HistogramSeries {
  readonly bucketCounts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    private readonly upperBounds: readonly number[],
  ) {
    this.bucketCounts = new Float64Array(upperBounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.upperBounds;
    let bucket = 0;
    while (bucket < bounds.length && value > bounds[bucket]) bucket++;
    this.bucketCounts[bucket] += 1;
    this.sum += value;
    this.count += 1;
  }
}

interface ExposedValue {
  labels: Labels;
  value: number;
  metricName?: string;
}

function labelsOf(names: readonly string[], values: readonly string[]): Labels {
  if (values.length !== names.length) throw new Error(`expected ${names.length} label values (${names.join(', ')}), got ${values.length}`);
  const labels: Labels = {};
  names.forEach((name, index) => (labels[name] = values[index]));
  return labels;
}

/**
 * A metric family whose series are bound once (at start, or the first time a label combination
 * occurs) and then updated as plain numbers: an observation allocates nothing and hashes nothing.
 * The registry reads the series when it is scraped, like any prom-client metric.
 */
abstract class BoundFamily<S extends { labels: Labels }> {
  readonly aggregator = 'sum';
  private readonly series = new Map<string, S>();

  protected constructor(
    registry: Registry,
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series of these label values (in `labelNames` order); keep it, and update it directly. */
  bind(...values: string[]): S {
    const key = values.join('\u0000');
    let series = this.series.get(key);
    if (!series) {
      series = this.create(labelsOf(this.labelNames, values));
      this.series.set(key, series);
    }
    return series;
  }

  protected all(): IterableIterator<S> {
    return this.series.values();
  }

  reset(): void {
    this.series.clear();
  }

  protected abstract create(labels: Labels): S;
}

export class CounterFamily extends BoundFamily<ValueSeries> {
  readonly type: string = 'counter';

  constructor(registry: Registry, name: string, help: string, labelNames: readonly string[] = []) {
    super(registry, name, help, labelNames);
  }

  protected create(labels: Labels): ValueSeries {
    return new ValueSeries(labels);
  }

  get(): { name: string; help: string; type: string; aggregator: string; values: ExposedValue[] } {
    const values = [...this.all()].map((series) => ({ labels: series.labels, value: series.value }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

export class GaugeFamily extends CounterFamily {
  override readonly type = 'gauge';
}

/** Latency buckets (seconds) for requests that mostly take milliseconds but may wait on a timeout. */
export const LATENCY_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class HistogramFamily extends BoundFamily<HistogramSeries> {
  readonly type = 'histogram';

  constructor(
    registry: Registry,
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly upperBounds: readonly number[] = LATENCY_BUCKETS_SECONDS,
  ) {
    super(registry, name, help, labelNames);
  }

  protected create(labels: Labels): HistogramSeries {
    return new HistogramSeries(labels, this.upperBounds);
  }

  get(): { name: string; help: string; type: string; aggregator: string; values: ExposedValue[] } {
    const values: ExposedValue[] = [];
    for (const series of this.all()) {
      let cumulative = 0;
      this.upperBounds.forEach((bound, index) => {
        cumulative += series.bucketCounts[index];
        values.push({ metricName: `${this.name}_bucket`, labels: { ...series.labels, le: String(bound) }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...series.labels, le: '+Inf' }, value: series.count });
      values.push({ metricName: `${this.name}_sum`, labels: series.labels, value: series.sum });
      values.push({ metricName: `${this.name}_count`, labels: series.labels, value: series.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
