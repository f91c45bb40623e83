import { IsInt, Max, Min } from 'class-validator';
import { RetentionServiceConfig } from '@app/config';
import { IsNotifierPublicKey, IsSecretKeyList } from '@app/secrets';
import { DEFAULT_OUTBOX_RELAY_OPTIONS } from './outbox/outbox.constants';

export class TasksConfig extends RetentionServiceConfig {
  override METRICS_PORT = 9466;

  /** The notifier's public key (`id:base64url` X25519) that a push config's token and credentials is sealed to on its way to the notifier over NATS. */
  @IsNotifierPublicKey()
  RELAY_NOTIFIER_PUBLIC_KEY: string;

  /** Keys that seal push-notification tokens and credentials at rest: `id:base64key,…`, the first one seals. */
  @IsSecretKeyList()
  RELAY_SECRET_KEYS: string;

  /** A2A push-notification configs one agent may hold across all its tasks (besides at most 10 per task). */
  @IsInt()
  @Min(1)
  @Max(100000)
  RELAY_PUSH_CONFIGS_PER_AGENT: number = 100;

  /** Days an idempotency key (a message id or a client key) is remembered: the retry horizon, after which a retry creates a new task. */
  @IsInt()
  @Min(1)
  @Max(3650)
  RELAY_IDEMPOTENCY_RETENTION_DAYS: number = 7;

  /** Days after which a terminal task is deleted with everything it holds; 0 keeps terminal tasks for good. */
  @IsInt()
  @Min(0)
  @Max(36500)
  RELAY_TERMINAL_TASK_RETENTION_DAYS: number = 0;

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

  /** How often the tasks service rejects the held handoffs past their deadline (docs/decisions/0024-held-handoffs.md). */
  @IsInt()
  @Min(100)
  @Max(3600000)
  RELAY_HOLD_EXPIRY_SWEEP_MS: number = 30000;
}
