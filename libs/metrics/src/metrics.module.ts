import { Global, Inject, Injectable, Module, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { Registry } from 'prom-client';
import { MetricsServer } from './metrics-server';
import { createMetricsRegistry } from './registry';

export interface MetricsModuleOptions {
  /** Where `GET /metrics` listens (0: any free port). */
  host: string;
  port: number;
  /** The metric groups this process exposes, each made once from the process's registry. */
  metrics: Provider[];
}

/** Starts the metrics server with the app and stops it when the app shuts down. */
@Injectable()
class MetricsServerLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(MetricsServer) private readonly server: MetricsServer) {}

  onApplicationBootstrap(): Promise<void> {
    return this.server.listen();
  }

  onApplicationShutdown(): Promise<void> {
    return this.server.close();
  }
}

/** One registry per app (tests host several apps in one process), its metric groups and its server. */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(options: MetricsModuleOptions): DynamicModule {
    return {
      module: MetricsModule,
      providers: [
        { provide: Registry, useFactory: createMetricsRegistry },
        { provide: MetricsServer, inject: [Registry], useFactory: (registry: Registry) => new MetricsServer(registry, options.host, options.port) },
        MetricsServerLifecycle,
        ...options.metrics,
      ],
      exports: [Registry, MetricsServer, ...options.metrics.map((provider) => ('provide' in provider ? provider.provide : provider))],
    };
  }
}

/** A provider of a metric group made from the app's registry: `metricsProvider(HttpMetrics)`. */
export function metricsProvider<T>(group: new (registry: Registry) => T): Provider {
  return { provide: group, inject: [Registry], useFactory: (registry: Registry) => new group(registry) };
}
