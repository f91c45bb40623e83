import type { Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { MetricsServer, OutboxMetrics, PostgresPoolMetrics, type OutboxBacklog, type PoolCounts } from '@app/metrics';
import { checkDatabase } from './database-health';
import { pgPoolOf } from './pg-pool';

/** The pg Pool's counts under a TypeORM Postgres data source (undefined until it is initialised). */
function poolOf(dataSource: DataSource): PoolCounts | undefined {
  return pgPoolOf(dataSource) as PoolCounts | undefined;
}

const POOL_METRICS_BINDING = Symbol('POOL_METRICS_BINDING');
const OUTBOX_METRICS_BINDING = Symbol('OUTBOX_METRICS_BINDING');

/** Points the pool gauges at the service's data source, and makes the service ready only while Postgres answers. */
export function poolMetricsBinding(): Provider {
  return {
    provide: POOL_METRICS_BINDING,
    inject: [getDataSourceToken(), PostgresPoolMetrics, MetricsServer],
    useFactory: (dataSource: DataSource, metrics: PostgresPoolMetrics, server: MetricsServer) => {
      metrics.watch(() => poolOf(dataSource));
      server.addReadinessCheck('postgres', async () => (await checkDatabase(dataSource)) === 'up');
    },
  };
}

/**
 * Points the outbox gauges at an outbox table (`"schema"."table"` with `position`, `created_at`
 * and `published_at`): two index-only lookups on its unpublished-rows index per scrape.
 */
export function outboxMetricsBinding(table: string): Provider {
  const sql = `SELECT (SELECT count(*) FROM ${table} WHERE published_at IS NULL)::int AS events,
    COALESCE((SELECT EXTRACT(EPOCH FROM now() - created_at) FROM ${table} WHERE published_at IS NULL ORDER BY position LIMIT 1), 0)::float8 AS oldest_age_seconds`;
  return {
    provide: OUTBOX_METRICS_BINDING,
    inject: [getDataSourceToken(), OutboxMetrics],
    useFactory: (dataSource: DataSource, metrics: OutboxMetrics) =>
      metrics.watch(async (): Promise<OutboxBacklog> => {
        const [row] = (await dataSource.query(sql)) as Array<{ events: number; oldest_age_seconds: number }>;
        return { events: row.events, oldestAgeSeconds: Math.max(0, row.oldest_age_seconds) };
      }),
  };
}
