import { IsInt, Max, Min } from 'class-validator';
import { DatabaseServiceConfig } from '@app/config';
import { IsSecretKeyList } from '@app/secrets';
import { DEFAULT_OUTBOX_RELAY_OPTIONS } from './outbox/outbox.constants';

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

  /** How long the outbox relay waits, after a round that left nothing behind, before it reads the outbox again. */
  @IsInt()
  @Min(1)
  @Max(60000)
  RELAY_OUTBOX_POLL_MS: number = DEFAULT_OUTBOX_RELAY_OPTIONS.pollIntervalMs;

  /** Outbox rows the relay reads and publishes per round. */
  @IsInt()
  @Min(1)
  @Max(10000)
  RELAY_OUTBOX_BATCH_SIZE: number = DEFAULT_OUTBOX_RELAY_OPTIONS.batchSize;

  /** Publishes the outbox relay awaits JetStream's acknowledgement of at once (a task's events one at a time). */
  @IsInt()
  @Min(1)
  @Max(10000)
  RELAY_OUTBOX_PUBLISH_CONCURRENCY: number = DEFAULT_OUTBOX_RELAY_OPTIONS.publishConcurrency;
}
