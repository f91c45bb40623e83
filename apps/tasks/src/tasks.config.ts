import { IsBoolean, IsInt, IsString, Max, Min, ValidateBy } from 'class-validator';
import { Transform } from 'class-transformer';
import { CHAIN_DEFAULTS, parseCyclePairs, type ChainLimits } from '@app/contracts';
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

  /**
   * How often the outbox relay sweeps the outbox for events their writer did not publish after the
   * commit (after a round that left nothing behind).
   */
  @IsInt()
  @Min(1)
  @Max(60000)
  RELAY_OUTBOX_POLL_MS: number = DEFAULT_OUTBOX_RELAY_OPTIONS.pollIntervalMs;

  /**
   * How old an unpublished event must be before the sweep publishes it (younger ones are their
   * writer's); at most a minute, well within the event stream's 10-minute duplicate window.
   */
  @IsInt()
  @Min(0)
  @Max(60000)
  RELAY_OUTBOX_SETTLE_MS: number = DEFAULT_OUTBOX_RELAY_OPTIONS.settleMs;

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

  /** The deepest a handoff may sit below its chain's root (docs/chains.md). */
  @IsInt()
  @Min(0)
  @Max(1000)
  RELAY_CHAIN_MAX_DEPTH: number = CHAIN_DEFAULTS.maxDepth;

  /** Handoffs one chain's whole tree may hold, its root included. */
  @IsInt()
  @Min(1)
  @Max(1000000)
  RELAY_CHAIN_BUDGET: number = CHAIN_DEFAULTS.budget;

  /** Minutes after its root was created that a chain takes new handoffs. */
  @IsInt()
  @Min(1)
  @Max(525600)
  RELAY_CHAIN_MAX_AGE_MINUTES: number = CHAIN_DEFAULTS.maxAgeMinutes;

  /** Handoffs from one agent to another per minute, linked or not (an echo storm's brake). */
  @IsInt()
  @Min(1)
  @Max(100000)
  RELAY_PAIR_HANDOFFS_PER_MINUTE: number = CHAIN_DEFAULTS.pairPerMinute;

  /** Whether an agent appearing twice on a chain's path refuses the handoff. */
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean()
  RELAY_CHAIN_REFUSE_CYCLES: boolean = true;

  /** Pairs of agents that may meet twice on a chain's path: `a@org:b@org,c@org:d@org`. */
  @IsString()
  @ValidateBy({
    name: 'isCyclePairList',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && cyclePairsProblem(value) === null,
      defaultMessage: (args) => `RELAY_CHAIN_CYCLE_ALLOWED_PAIRS: ${cyclePairsProblem(String(args?.value)) ?? 'must be a list of pairs'}`,
    },
  })
  RELAY_CHAIN_CYCLE_ALLOWED_PAIRS: string = '';

  /** The chain bounds this relay applies (docs/chains.md). */
  get chainLimits(): ChainLimits {
    return {
      maxDepth: this.RELAY_CHAIN_MAX_DEPTH,
      budget: this.RELAY_CHAIN_BUDGET,
      maxAgeMinutes: this.RELAY_CHAIN_MAX_AGE_MINUTES,
      pairPerMinute: this.RELAY_PAIR_HANDOFFS_PER_MINUTE,
      refuseCycles: this.RELAY_CHAIN_REFUSE_CYCLES,
      cycleAllowedPairs: parseCyclePairs(this.RELAY_CHAIN_CYCLE_ALLOWED_PAIRS),
    };
  }
}

function cyclePairsProblem(value: string): string | null {
  try {
    parseCyclePairs(value);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}
