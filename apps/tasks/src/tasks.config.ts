import { DatabaseServiceConfig } from '@app/config';
import { IsSecretKeyList } from '@app/secrets';

export class TasksConfig extends DatabaseServiceConfig {
  override METRICS_PORT = 9466;

  /** Keys that seal push-notification tokens and credentials at rest: `id:base64key,…`, the first one seals. */
  @IsSecretKeyList()
  RELAY_SECRET_KEYS: string;
}
