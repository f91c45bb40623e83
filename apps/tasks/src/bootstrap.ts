import type { INestMicroservice } from '@nestjs/common';
import type { LoggingOptions } from '@app/logging';
import { startRelayMicroservice } from '@app/messaging';
import { TasksConfig } from './tasks.config';
import { TasksAppModule } from './tasks-app.module';

export function startTasksService(config: TasksConfig, options: LoggingOptions = {}): Promise<INestMicroservice> {
  return startRelayMicroservice('tasks', TasksAppModule.forRoot(config), config, options);
}
