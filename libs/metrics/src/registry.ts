import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * A registry of its own for one relay process (tests run several in one Node process), with
 * prom-client's default process and Node.js metrics.
 */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}
