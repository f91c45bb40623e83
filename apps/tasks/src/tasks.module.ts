import { Module, type DynamicModule } from '@nestjs/common';
import { defaultInstanceId, healthControllerFor, INSTANCE_ID, serviceTypeOrmRoot } from '@app/database';
import { TasksConfig } from './tasks.config';
import { tasksDataSourceOptions } from './database/data-source';
import { HandoffsModule } from './handoffs/handoffs.module';
import { OutboxModule } from './outbox/outbox.module';
import { PushConfigsModule } from './push-configs/push-configs.module';

@Module({})
export class TasksModule {
  static forRoot(config: TasksConfig): DynamicModule {
    return {
      module: TasksModule,
      imports: [
        serviceTypeOrmRoot(tasksDataSourceOptions(config.DATABASE_URL, config.RELAY_DB_STATEMENT_TIMEOUT_MS), config.RELAY_MIGRATE_ON_START),
        HandoffsModule,
        PushConfigsModule,
        OutboxModule.forRoot({ natsUrl: config.NATS_URL, subjectPrefix: config.NATS_SUBJECT_PREFIX, databaseUrl: config.DATABASE_URL }),
      ],
      controllers: [healthControllerFor('tasks')],
      providers: [
        { provide: TasksConfig, useValue: config },
        { provide: INSTANCE_ID, useValue: config.INSTANCE_ID || defaultInstanceId() },
      ],
    };
  }
}
