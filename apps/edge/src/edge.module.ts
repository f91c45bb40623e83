import { Global, Module, type DynamicModule } from '@nestjs/common';
import { HttpMetrics, metricsProvider, MetricsModule, NatsClientMetrics } from '@app/metrics';
import { AssertionKeysModule } from './assertion-keys/assertion-keys.module';
import { CardsModule } from './cards/cards.module';
import { UpstreamPushModule } from './upstream-push/upstream-push.module';
import { OperatorModule } from './operator/operator.module';
import { DirectoryLookupsModule } from './directory/directory-lookups.module';
import { EventDocsModule } from './event-docs/event-docs.module';
import { EdgeConfig } from './edge.config';
import { HealthModule } from './health/health.module';
import { JsonRpcModule } from './jsonrpc/json-rpc.module';
import { ServiceRpcModule } from './service-rpc/service-rpc.module';
import { RequestMetrics } from './metrics/request-metrics';
import { RestModule } from './rest/rest.module';

@Global()
@Module({})
export class EdgeModule {
  static forRoot(config: EdgeConfig): DynamicModule {
    return {
      module: EdgeModule,
      imports: [
        MetricsModule.forRoot({
          host: config.METRICS_HOST,
          port: config.METRICS_PORT,
          metrics: [metricsProvider(HttpMetrics), metricsProvider(NatsClientMetrics)],
        }),
        ServiceRpcModule,
        DirectoryLookupsModule,
        HealthModule,
        OperatorModule,
        CardsModule,
        AssertionKeysModule,
        EventDocsModule,
        JsonRpcModule,
        RestModule,
        UpstreamPushModule,
      ],
      providers: [{ provide: EdgeConfig, useValue: config }, RequestMetrics],
      exports: [EdgeConfig, RequestMetrics],
    };
  }
}
