import { IsInt, Max, Min } from 'class-validator';
import { DatabaseServiceConfig } from '@app/config';
import { IsSecretKeyList } from '@app/secrets';

export class TasksConfig extends DatabaseServiceConfig {
  override METRICS_PORT = 9466;

  /** Keys that seal push-notification tokens and credentials at rest: `id:base64key,…`, the first one seals. */
  @IsSecretKeyList()
  RELAY_SECRET_KEYS: string;

  /** A2A push-notification configs one agent may hold across all its tasks (besides at most 10 per task). */
  @IsInt()
  @Min(1)
  @Max(100000)
  RELAY_PUSH_CONFIGS_PER_AGENT: number = 100;
}
