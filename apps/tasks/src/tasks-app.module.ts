import { Module, type DynamicModule } from '@nestjs/common';
import { outboxMetricsBinding, poolMetricsBinding, serviceTypeOrmRoot } from '@app/database';
import { defaultInstanceId, healthControllerFor, INSTANCE_ID } from '@app/messaging';
import { metricsProvider, OrgQuotaMetrics, OutboxMetrics, RetentionMetrics, serviceMetricsModule } from '@app/metrics';
import { SecretsModule } from '@app/secrets';
import { TasksConfig } from './tasks.config';
import { tasksDataSourceOptions } from './database/data-source';
import { TasksModule } from './tasks/tasks.module';
import { ApprovalsModule } from './approvals/approvals.module';
import { OutboxModule } from './outbox/outbox.module';
import { OUTBOX_TABLE } from './outbox/outbox.constants';
import { TasksRetentionService } from './retention/retention.service';
import { PushConfigsModule } from './push-configs/push-configs.module';
import { PUSH_CONFIG_SEALED_COLUMNS } from './push-configs/push-configs.service';

@Module({})
export class TasksAppModule {
  static forRoot(config: TasksConfig): DynamicModule {
    return {
      module: TasksAppModule,
      imports: [
        serviceTypeOrmRoot(tasksDataSourceOptions(config.DATABASE_URL, config.RELAY_DB_STATEMENT_TIMEOUT_MS), config.RELAY_MIGRATE_ON_START),
        serviceMetricsModule(config, [metricsProvider(OutboxMetrics), metricsProvider(RetentionMetrics), metricsProvider(OrgQuotaMetrics)]),
        SecretsModule.forRoot(config.RELAY_SECRET_KEYS, PUSH_CONFIG_SEALED_COLUMNS),
        TasksModule.forRoot(config),
        ApprovalsModule.forRoot(config),
        PushConfigsModule.forRoot(config),
        OutboxModule.forRoot({
          natsUrl: config.natsServers,
          subjectPrefix: config.NATS_SUBJECT_PREFIX,
          publicUrl: config.RELAY_PUBLIC_URL,
          databaseUrl: config.DATABASE_URL,
          pollIntervalMs: config.RELAY_OUTBOX_POLL_MS,
          settleMs: config.RELAY_OUTBOX_SETTLE_MS,
          batchSize: config.RELAY_OUTBOX_BATCH_SIZE,
          publishConcurrency: config.RELAY_OUTBOX_PUBLISH_CONCURRENCY,
        }),
      ],
      controllers: [healthControllerFor('tasks')],
      providers: [
        { provide: TasksConfig, useValue: config },
        { provide: INSTANCE_ID, useValue: config.INSTANCE_ID || defaultInstanceId() },
        poolMetricsBinding(),
        outboxMetricsBinding(OUTBOX_TABLE),
        TasksRetentionService,
      ],
    };
  }
}
