import { RetentionServiceConfig } from '@app/config';

export class DirectoryConfig extends RetentionServiceConfig {
  override METRICS_PORT = 9465;
}
