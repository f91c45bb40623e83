import { Module, type DynamicModule } from '@nestjs/common';
import { outboxMetricsBinding, poolMetricsBinding, serviceTypeOrmRoot } from '@app/database';
import { defaultInstanceId, healthControllerFor, INSTANCE_ID } from '@app/messaging';
import { metricsProvider, OrgQuotaMetrics, OutboxMetrics, RetentionMetrics, serviceMetricsModule } from '@app/metrics';
import { DirectoryConfig } from './directory.config';
import { directoryDataSourceOptions } from './database/data-source';
import { AgentsService } from './agents/agents.service';
import { AdminAuditService } from './audit/admin-audit.service';
import { KeyFilterPublisher } from './agents/key-filter-publisher';
import { WebhookSecretProvisioner } from './agents/webhook-secret-provisioner';
import { DirectoryController } from './directory.controller';
import { AgentEventsPublisher } from './events/agent-events.publisher';
import { DirectoryRetentionService } from './retention/retention.service';
import { TrustService } from './trust/trust.service';
import { OrgsService } from './orgs/orgs.service';
import { PersonRolesService } from './orgs/person-roles.service';

@Module({})
export class DirectoryModule {
  static forRoot(config: DirectoryConfig): DynamicModule {
    return {
      module: DirectoryModule,
      imports: [
        serviceTypeOrmRoot(directoryDataSourceOptions(config.DATABASE_URL, config.RELAY_DB_STATEMENT_TIMEOUT_MS), config.RELAY_MIGRATE_ON_START),
        serviceMetricsModule(config, [metricsProvider(OutboxMetrics), metricsProvider(RetentionMetrics), metricsProvider(OrgQuotaMetrics)]),
      ],
      controllers: [healthControllerFor('directory'), DirectoryController],
      providers: [
        { provide: DirectoryConfig, useValue: config },
        { provide: INSTANCE_ID, useValue: config.INSTANCE_ID || defaultInstanceId() },
        poolMetricsBinding(),
        outboxMetricsBinding('"directory"."outbox_events"'),
        AgentEventsPublisher,
        WebhookSecretProvisioner,
        KeyFilterPublisher,
        OrgsService,
        PersonRolesService,
        AgentsService,
        TrustService,
        AdminAuditService,
        DirectoryRetentionService,
      ],
    };
  }
}
