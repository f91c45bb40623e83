import { DatabaseServiceConfig } from '@app/config';

export class TasksConfig extends DatabaseServiceConfig {
  override METRICS_PORT = 9466;
}
