import { Global, Module, type DynamicModule } from '@nestjs/common';
import { HttpMetrics, metricsProvider, MetricsModule, NatsClientMetrics } from '@app/metrics';
import { AdminModule } from './admin/admin.module';
import { ApprovalsModule } from './approvals/approvals.module';
import { DeliveriesAdminModule } from './admin/deliveries-admin.module';
import { AdminAuditModule } from './admin/admin-audit.module';
import { CardsModule } from './cards/cards.module';
import { UpstreamPushModule } from './upstream-push/upstream-push.module';
import { ConsoleModule } from './console/console.module';
import { DirectoryLookupsModule } from './directory/directory-lookups.module';
import { EventDocsModule } from './event-docs/event-docs.module';
import { EdgeConfig } from './edge.config';
import { HealthModule } from './health/health.module';
import { JsonRpcModule } from './jsonrpc/json-rpc.module';
import { MessagingModule } from './messaging/messaging.module';
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
        MessagingModule,
        DirectoryLookupsModule,
        HealthModule,
        AdminModule,
        DeliveriesAdminModule,
        AdminAuditModule,
        ApprovalsModule,
        ConsoleModule,
        CardsModule,
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
