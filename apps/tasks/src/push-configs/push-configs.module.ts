import { Module, type DynamicModule } from '@nestjs/common';
import { NotifierSealer } from '@app/secrets';
import { TasksConfig } from '../tasks.config';
import { PushConfigsController } from './push-configs.controller';
import { PushConfigsService } from './push-configs.service';

/** A2A push-notification configs of tasks (`relay.tasks.v1.push_configs.*`). */
@Module({})
export class PushConfigsModule {
  static forRoot(config: TasksConfig): DynamicModule {
    return {
      module: PushConfigsModule,
      controllers: [PushConfigsController],
      providers: [
        PushConfigsService,
        { provide: TasksConfig, useValue: config },
        { provide: NotifierSealer, useValue: new NotifierSealer(config.RELAY_NOTIFIER_PUBLIC_KEY) },
      ],
    };
  }
}
