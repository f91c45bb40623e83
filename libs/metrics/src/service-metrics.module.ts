import type { DynamicModule, Provider } from '@nestjs/common';
import { Registry } from 'prom-client';
import { metricsProvider, MetricsModule } from './metrics.module';
import { NatsHandlerMetrics } from './nats.metrics';
import { PostgresPoolMetrics } from './service.metrics';

export interface ServiceMetricsConfig {
  METRICS_HOST: string;
  METRICS_PORT: number;
  NATS_SUBJECT_PREFIX: string;
}

/** The metrics of a NATS service with a Postgres pool: handled requests, the pool, plus `extra` groups. */
export function serviceMetricsModule(config: ServiceMetricsConfig, extra: Provider[] = []): DynamicModule {
  return MetricsModule.forRoot({
    host: config.METRICS_HOST,
    port: config.METRICS_PORT,
    metrics: [
      { provide: NatsHandlerMetrics, inject: [Registry], useFactory: (registry: Registry) => new NatsHandlerMetrics(registry, config.NATS_SUBJECT_PREFIX) },
      metricsProvider(PostgresPoolMetrics),
      ...extra,
    ],
  });
}
