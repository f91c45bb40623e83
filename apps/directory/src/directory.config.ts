import { DatabaseServiceConfig } from '@app/config';

export class DirectoryConfig extends DatabaseServiceConfig {
  override METRICS_PORT = 9465;
}
