import { Module, type DynamicModule } from '@nestjs/common';
import { defaultInstanceId, healthControllerFor, INSTANCE_ID, serviceTypeOrmRoot } from '@app/database';
import { TasksConfig } from './tasks.config';
import { tasksDataSourceOptions } from './database/data-source';
import { HandoffsModule } from './handoffs/handoffs.module';

@Module({})
export class TasksModule {
  static forRoot(config: TasksConfig): DynamicModule {
    return {
      module: TasksModule,
      imports: [serviceTypeOrmRoot(tasksDataSourceOptions(config.DATABASE_URL), config.RELAY_MIGRATE_ON_START), HandoffsModule],
      controllers: [healthControllerFor('tasks')],
      providers: [
        { provide: TasksConfig, useValue: config },
        { provide: INSTANCE_ID, useValue: config.INSTANCE_ID || defaultInstanceId() },
      ],
    };
  }
}
