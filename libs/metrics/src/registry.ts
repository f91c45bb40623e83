import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * How often the event-loop delay is sampled. prom-client's default, 10 ms, wakes an idle process
 * 100 times a second (about 5 ms of CPU a second); 10 samples a second still give the lag's
 * percentiles (each sample is exact, only fewer are taken).
 */
const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * A registry of its own for one relay process (tests run several in one Node process), with
 * prom-client's default process and Node.js metrics.
 */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  return registry;
}
