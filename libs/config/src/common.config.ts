import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsIP, IsOptional, IsString, Matches, Max, Min } from 'class-validator';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Reads the raw value (implicit conversion would turn the string 'false' into true). */
export function toBoolean({ obj, key }: { obj: Record<string, unknown>; key: string }): unknown {
  const value = obj[key];
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  return value;
}

/** Keys every relay process reads. */
export class CommonConfig {
  @Matches(/^(nats|tls|wss?):\/\/[^\s]+$/, { message: 'NATS_URL must be a nats:// URL' })
  NATS_URL: string = 'nats://127.0.0.1:4222';

  /** Prefix for every NATS subject; lets several relays or test runs share one NATS server. */
  @Matches(/^([a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*)?$/, { message: 'NATS_SUBJECT_PREFIX must be dot-separated tokens' })
  NATS_SUBJECT_PREFIX: string = '';

  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  @IsInt()
  @Min(100)
  @Max(600000)
  NATS_REQUEST_TIMEOUT_MS: number = 5000;

  @IsOptional()
  @IsString()
  INSTANCE_ID: string = '';

  /** Port of this process's `GET /metrics` (Prometheus); each process has its own default, 0 picks a free one. */
  @IsInt()
  @Min(0)
  @Max(65535)
  METRICS_PORT: number = 9464;

  /** Address the metrics server binds to (0.0.0.0 in a container, so Prometheus can scrape it). */
  @IsIP()
  METRICS_HOST: string = '127.0.0.1';
}

/** Keys of the services that own data in Postgres. */
export class DatabaseServiceConfig extends CommonConfig {
  @Matches(/^postgres(ql)?:\/\/[^\s]+$/, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL: string = 'postgres://postgres@127.0.0.1:5432/relay';

  @Transform(toBoolean)
  @IsIn([true, false], { message: 'RELAY_MIGRATE_ON_START must be true or false' })
  RELAY_MIGRATE_ON_START: boolean = true;

  /** Longest a database statement may run before Postgres cancels it (0: no limit); migrations have none. */
  @IsInt()
  @Min(0)
  @Max(3600000)
  RELAY_DB_STATEMENT_TIMEOUT_MS: number = 5000;

  /** Requests one service process handles at once; past it a request is refused at once as `overloaded` (HTTP 503). */
  @IsInt()
  @Min(1)
  @Max(100000)
  RELAY_MAX_IN_FLIGHT: number = 64;
}
