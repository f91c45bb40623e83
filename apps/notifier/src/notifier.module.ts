import { Module, type DynamicModule } from '@nestjs/common';
import { defaultInstanceId, healthControllerFor, INSTANCE_ID, serviceTypeOrmRoot } from '@app/database';
import { NotifierConfig } from './notifier.config';
import { notifierDataSourceOptions } from './database/data-source';

@Module({})
export class NotifierModule {
  static forRoot(config: NotifierConfig): DynamicModule {
    return {
      module: NotifierModule,
      imports: [serviceTypeOrmRoot(notifierDataSourceOptions(config.DATABASE_URL), config.RELAY_MIGRATE_ON_START)],
      controllers: [healthControllerFor('notifier')],
      providers: [
        { provide: NotifierConfig, useValue: config },
        { provide: INSTANCE_ID, useValue: config.INSTANCE_ID || defaultInstanceId() },
      ],
    };
  }
}
