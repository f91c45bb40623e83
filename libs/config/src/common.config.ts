import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsIP, IsNumber, IsOptional, IsString, IsUrl, Matches, Max, Min, ValidateBy } from 'class-validator';
import { IsReadableFile, natsCredentialProblem, type NatsCredentials } from './nats-credentials';
import { parseNatsServers, type NatsServers } from './nats-servers';

/** The values of OTEL_TRACES_SAMPLER the relay understands (the standard ones without a plugin). */
const TRACES_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];

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

/** Valid when `parseNatsServers` accepts the value; its message names the bad entry. */
function IsNatsServerList(): PropertyDecorator {
  const problemOf = (value: unknown): string | null => {
    if (typeof value !== 'string') return 'NATS_URL must be a list of NATS servers';
    try {
      parseNatsServers(value);
      return null;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  };
  return ValidateBy({
    name: 'isNatsServerList',
    validator: { validate: (value) => problemOf(value) === null, defaultMessage: (args) => problemOf(args?.value) ?? '' },
  });
}

function urlCarriesCredentials(config: CommonConfig): boolean {
  try {
    const servers = parseNatsServers(config.NATS_URL);
    return Boolean(servers.user ?? servers.token);
  } catch {
    return false;
  }
}

/** Keys every relay process reads. */
export class CommonConfig {
  /** One NATS server or several, comma-separated (`nats://a:4222,nats://b:4222`); read through `natsServers`. */
  @IsNatsServerList()
  @ValidateBy({
    name: 'natsCredentialsTogether',
    validator: {
      validate: (_value, args) => natsCredentialProblem(args?.object as CommonConfig, urlCarriesCredentials(args?.object as CommonConfig)) === null,
      defaultMessage: (args) => natsCredentialProblem(args?.object as CommonConfig, urlCarriesCredentials(args?.object as CommonConfig)) ?? '',
    },
  })
  NATS_URL: string = 'nats://127.0.0.1:4222';

  /** A `.creds` file (user JWT + nkey seed) for NATS decentralized auth. */
  @IsOptional()
  @IsReadableFile()
  NATS_CREDS_FILE?: string;

  /** A file holding the user nkey seed (`SU…`) this process connects with. */
  @IsOptional()
  @IsReadableFile()
  NATS_NKEY_SEED_FILE?: string;

  /** A NATS user name; its password is read from NATS_PASSWORD_FILE. */
  @IsOptional()
  @IsString()
  NATS_USER?: string;

  @IsOptional()
  @IsReadableFile()
  NATS_PASSWORD_FILE?: string;

  /** A file holding the token of a NATS server with token authorization. */
  @IsOptional()
  @IsReadableFile()
  NATS_TOKEN_FILE?: string;

  /** The CA certificate NATS servers are verified against (PEM); setting it turns TLS on. */
  @IsOptional()
  @IsReadableFile()
  NATS_TLS_CA_FILE?: string;

  /** A client certificate (PEM) for servers that verify clients, with NATS_TLS_KEY_FILE. */
  @IsOptional()
  @IsReadableFile()
  NATS_TLS_CERT_FILE?: string;

  @IsOptional()
  @IsReadableFile()
  NATS_TLS_KEY_FILE?: string;

  /**
   * The URL agents reach the edge at: agent cards point here, and it is the `source` of every event
   * the relay publishes and the base of its schemas' URLs (`dataschema`), so every process reads it.
   */
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] }, { message: 'RELAY_PUBLIC_URL must be an http(s) URL' })
  RELAY_PUBLIC_URL: string = 'http://127.0.0.1:8080';

  /** Replicas of every stream (and so of every durable consumer) the relay creates: 3 on a three-node cluster. */
  @IsInt()
  @Min(1)
  @Max(5)
  RELAY_JETSTREAM_REPLICAS: number = 1;

  /** Bytes the event stream holds at most (its oldest events go past it): 1 GiB. */
  @IsInt()
  @Min(1024 * 1024)
  RELAY_EVENT_STREAM_MAX_BYTES: number = 1024 * 1024 * 1024;

  /** Bytes each of the relay's smaller streams holds at most (rate-limit leases, console sessions, the key filter bucket): 128 MiB. */
  @IsInt()
  @Min(1024 * 1024)
  RELAY_STATE_STREAM_MAX_BYTES: number = 128 * 1024 * 1024;

  private parsedNatsServers?: { from: string; servers: NatsServers };

  /** `NATS_URL` as the servers to connect to, with its credentials apart and the credential files beside them. */
  get natsServers(): NatsServers {
    if (this.parsedNatsServers?.from !== this.NATS_URL) {
      this.parsedNatsServers = { from: this.NATS_URL, servers: { ...parseNatsServers(this.NATS_URL), credentials: this.natsCredentials() } };
    }
    return this.parsedNatsServers.servers;
  }

  private natsCredentials(): NatsCredentials {
    const tls =
      this.NATS_TLS_CA_FILE || this.NATS_TLS_CERT_FILE
        ? { caFile: this.NATS_TLS_CA_FILE, certFile: this.NATS_TLS_CERT_FILE, keyFile: this.NATS_TLS_KEY_FILE }
        : undefined;
    return {
      credsFile: this.NATS_CREDS_FILE,
      nkeySeedFile: this.NATS_NKEY_SEED_FILE,
      user: this.NATS_USER,
      passwordFile: this.NATS_PASSWORD_FILE,
      tokenFile: this.NATS_TOKEN_FILE,
      tls,
    };
  }

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

  /** OpenTelemetry traces stay off while true, whatever else is set. */
  @Transform(toBoolean)
  @IsIn([true, false], { message: 'OTEL_SDK_DISABLED must be true or false' })
  OTEL_SDK_DISABLED: boolean = false;

  /** `otlp` turns traces on, `none` keeps them off; unset, they are on when an OTLP endpoint is set. */
  @IsIn(['', 'otlp', 'none'], { message: 'OTEL_TRACES_EXPORTER must be otlp or none' })
  OTEL_TRACES_EXPORTER: string = '';

  /** Base URL of the OTLP/HTTP collector; traces go to `<it>/v1/traces`. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] }, { message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL' })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  /** Full URL traces are posted to (wins over OTEL_EXPORTER_OTLP_ENDPOINT). */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] }, { message: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http(s) URL' })
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;

  /** The traces' service name; `agentrelay-<service>` when unset. */
  @IsOptional()
  @IsString()
  OTEL_SERVICE_NAME?: string;

  @IsIn(TRACES_SAMPLERS, { message: `OTEL_TRACES_SAMPLER must be one of ${TRACES_SAMPLERS.join(', ')}` })
  OTEL_TRACES_SAMPLER: string = 'parentbased_always_on';

  /** The sampled share of new traces for the `traceidratio` samplers (0 to 1). */
  @IsOptional()
  @IsNumber()
  @Min(0)
  @Max(1)
  OTEL_TRACES_SAMPLER_ARG?: number;
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

  /**
   * The deployment's id when its services keep their schemas in separate databases (each would
   * hold an id of its own); unset, the id the relay database holds. The event stream of the prefix
   * is owned by one deployment id.
   */
  @IsOptional()
  @Matches(/^[0-9A-Za-z_-]{1,64}$/, { message: 'RELAY_DEPLOYMENT_ID is 1-64 letters, digits, - or _' })
  RELAY_DEPLOYMENT_ID?: string;

  /** Requests one service process handles at once; past it a request is refused at once as `overloaded` (HTTP 503). */
  @IsInt()
  @Min(1)
  @Max(100000)
  RELAY_MAX_IN_FLIGHT: number = 64;
}

/** A service that keeps rows only for a window and deletes older ones in batches (docs/architecture.md#retention). */
export class RetentionServiceConfig extends DatabaseServiceConfig {
  /** Days a published outbox event is kept; it also bounds how far back a stream resumes with Last-Event-ID. */
  @IsInt()
  @Min(1)
  @Max(3650)
  RELAY_OUTBOX_RETENTION_DAYS: number = 7;

  /** Days an audit row is kept. */
  @IsInt()
  @Min(1)
  @Max(36500)
  RELAY_AUDIT_RETENTION_DAYS: number = 400;

  /** How often a replica looks for rows past their window (one replica at a time deletes). */
  @IsInt()
  @Min(100)
  @Max(86400000)
  RELAY_RETENTION_INTERVAL_MS: number = 600000;

  /** Rows one delete removes, each batch its own short transaction. */
  @IsInt()
  @Min(1)
  @Max(100000)
  RELAY_RETENTION_BATCH_SIZE: number = 1000;

  /** Pause between two batches, so that deletes never hold the database for long. */
  @IsInt()
  @Min(0)
  @Max(60000)
  RELAY_RETENTION_PAUSE_MS: number = 100;
}
