import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsInt, IsIP, IsOptional, IsString, IsUrl, Matches, Max, Min, MinLength, ValidateBy, ValidateIf } from 'class-validator';
import { isIP } from 'node:net';
import { CommonConfig } from '@app/config';
import { parseRoleGrant } from '@app/contracts';
import { IsAssertionPublicKeys, IsNotifierPublicKey } from '@app/secrets';
import { tokenIssuersProblem } from './token-issuers';

export class EdgeConfig extends CommonConfig {
  /** The edge's metrics listen apart from its public port, which never serves them. */
  override METRICS_PORT = 9464;

  /** The notifier's public key (`id:base64url` X25519) that an upstream agent's credential, client key or a new webhook secret is sealed to on its way to the notifier over NATS. */
  @IsNotifierPublicKey()
  RELAY_NOTIFIER_PUBLIC_KEY: string;

  /**
   * The public keys (`id:base64url` P-256) of the relay's delivery assertions, published at
   * `/.well-known/jwks.json`: the notifier's RELAY_ASSERTION_SIGNING_KEY among them, and during a
   * rotation the next one or the last one too (docs/operations.md#delivery-assertion-keys).
   */
  @IsAssertionPublicKeys()
  RELAY_ASSERTION_PUBLIC_KEYS: string;

  @IsInt()
  @Min(0)
  @Max(65535)
  EDGE_PORT: number = 8080;

  @IsIP()
  EDGE_HOST: string = '127.0.0.1';

  /** Bearer token of the admin API; the admin API answers 401 to everyone while it is unset. */
  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'RELAY_ADMIN_TOKEN must be at least 16 characters' })
  @Matches(/^(?!ah_live_)/, { message: 'RELAY_ADMIN_TOKEN must not look like an agent API key (ah_live_…)' })
  RELAY_ADMIN_TOKEN?: string;

  /**
   * The key (base64 of 32 bytes) that seals the ids of the agents' streams; every edge of a relay
   * needs the same one for a stream to resume on another edge or after a restart. Unset, it is
   * derived from RELAY_ADMIN_TOKEN, or random per process when that is unset too.
   */
  @IsOptional()
  @ValidateBy({
    name: 'isStreamIdKey',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && /^[A-Za-z0-9+/]{43}=$/.test(value) && Buffer.from(value, 'base64').length === 32,
      defaultMessage: () => 'RELAY_STREAM_ID_KEY must be the base64 of 32 bytes (openssl rand -base64 32)',
    },
  })
  RELAY_STREAM_ID_KEY?: string;

  @IsInt()
  @Min(1)
  @Max(100000)
  RELAY_RATE_LIMIT_PER_MINUTE: number = 60;

  /**
   * The proxies (addresses, CIDR ranges, or proxy-addr's names `loopback`, `linklocal`,
   * `uniquelocal`) whose `X-Forwarded-For` the edge believes when it takes a request's client
   * address (Fastify's `trustProxy`); comma-separated, none by default.
   */
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string'
      ? value
          .split(',')
          .map((entry) => entry.trim())
          .filter(Boolean)
      : value,
  )
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateBy(
    {
      name: 'isProxyAddress',
      validator: {
        validate: isTrustedProxy,
        defaultMessage: () => 'each entry of RELAY_TRUSTED_PROXIES must be an IP address, a CIDR range, loopback, linklocal or uniquelocal',
      },
    },
    { each: true },
  )
  RELAY_TRUSTED_PROXIES: string[] = [];

  /** Failed authentications (agent keys, admin token) per client address or per presented secret before 429. */
  @IsInt()
  @Min(1)
  @Max(100000)
  RELAY_AUTH_FAILURES_PER_WINDOW: number = 20;

  /** The window those failures are counted in (ms). */
  @IsInt()
  @Min(1000)
  @Max(24 * 60 * 60 * 1000)
  RELAY_AUTH_FAILURE_WINDOW_MS: number = 60000;

  /**
   * The identity providers whose JWTs authenticate agents beside API keys: a JSON list of
   * `{issuer, audience, handle_claim?}` or the path of a file holding one (docs/dialects.md#bearer-jwts-from-your-identity-provider).
   */
  @IsOptional()
  @ValidateBy({
    name: 'isTokenIssuers',
    validator: {
      validate: (value: unknown) => tokenIssuersProblem(value) === undefined,
      defaultMessage: (args) => tokenIssuersProblem(args?.value) ?? 'RELAY_OIDC_ISSUERS is invalid',
    },
  })
  RELAY_OIDC_ISSUERS?: string;

  /** The clock skew allowed on a token's `exp` and `nbf` (seconds). */
  @IsInt()
  @Min(0)
  @Max(300)
  RELAY_OIDC_CLOCK_SKEW_SECONDS: number = 30;

  /** The least time between two fetches of an issuer's JWKS for a token with an unknown `kid` (ms). */
  @IsInt()
  @Min(0)
  @Max(24 * 60 * 60 * 1000)
  RELAY_OIDC_JWKS_COOLDOWN_MS: number = 30000;

  /** A2A streams (message/stream, tasks/resubscribe) one agent may hold open at once on this edge. */
  @IsInt()
  @Min(1)
  @Max(10000)
  RELAY_STREAMS_PER_AGENT: number = 10;

  /** `GET /admin/events` streams one console session may hold open at once on this edge (callers with the admin token count as one session). */
  @IsInt()
  @Min(1)
  @Max(1000)
  RELAY_ADMIN_EVENT_STREAMS_PER_SESSION: number = 4;

  /** `GET /admin/events` streams open at once on this edge, all sessions together. */
  @IsInt()
  @Min(1)
  @Max(10000)
  RELAY_ADMIN_EVENT_STREAMS_PER_EDGE: number = 32;

  /** Replay pages (up to 200 events, 512 KiB each) an admin event stream resuming from an old position reads a second, per console session. */
  @IsInt()
  @Min(1)
  @Max(1000)
  RELAY_ADMIN_EVENT_REPLAY_PAGES_PER_SECOND: number = 4;

  /** Replay pages all admin event streams of this edge read a second together. */
  @IsInt()
  @Min(1)
  @Max(10000)
  RELAY_ADMIN_EVENT_REPLAY_PAGES_PER_SECOND_PER_EDGE: number = 16;

  /**
   * How long the edge reuses the directory's answers (API-key identities, admissions, endpoint
   * profiles); changes also drop them at once. 0 asks the directory on every request.
   */
  @IsInt()
  @Min(0)
  @Max(1000)
  RELAY_DIRECTORY_CACHE_MS: number = 1000;

  @IsInt()
  @Min(100)
  @Max(600000)
  RELAY_BLOCKING_TIMEOUT_MS: number = 30000;

  /** The longest an A2A stream (message/stream, tasks/resubscribe) stays open before the relay closes it. */
  @IsInt()
  @Min(1000)
  @Max(24 * 60 * 60 * 1000)
  RELAY_STREAM_MAX_MS: number = 600000;

  /**
   * Bytes of events one stream holds for a client that reads slower than they come (besides the one
   * being written); past it the stream ends with the id to resume from.
   */
  @IsInt()
  @Min(64 * 1024)
  @Max(256 * 1024 * 1024)
  RELAY_STREAM_BUFFER_BYTES: number = 2 * 1024 * 1024;

  /** How long a stream waits for a client that has stopped reading (its socket full) before the relay closes it. */
  @IsInt()
  @Min(1000)
  @Max(10 * 60 * 1000)
  RELAY_STREAM_STALL_MS: number = 30000;

  /** Aggregate size of the message histories on one A2A ListTasks page (4 MiB; docs/operations.md#limits). */
  @IsInt()
  @Min(1024)
  @Max(64 * 1024 * 1024)
  RELAY_LIST_HISTORY_BUDGET_BYTES: number = 4 * 1024 * 1024;

  /** How long a console sign-in (`POST /admin/session`) lasts, kept server-side (8 h). */
  @IsInt()
  @Min(60000)
  @Max(7 * 24 * 60 * 60 * 1000)
  RELAY_CONSOLE_SESSION_TTL_MS: number = 8 * 60 * 60 * 1000;

  /** The OpenID Provider people sign in to the console with (its issuer URL; discovery at `/.well-known/openid-configuration`). Unset: no OIDC sign-in. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] }, { message: 'RELAY_CONSOLE_OIDC_ISSUER must be an http(s) URL' })
  RELAY_CONSOLE_OIDC_ISSUER?: string;

  /** The console's client id at that provider (needed with RELAY_CONSOLE_OIDC_ISSUER). */
  @ValidateIf((config: EdgeConfig) => config.RELAY_CONSOLE_OIDC_ISSUER !== undefined || config.RELAY_CONSOLE_OIDC_CLIENT_ID !== undefined)
  @IsString({ message: 'RELAY_CONSOLE_OIDC_CLIENT_ID is needed with RELAY_CONSOLE_OIDC_ISSUER' })
  @MinLength(1)
  RELAY_CONSOLE_OIDC_CLIENT_ID?: string;

  /** The console's client secret (a confidential client); unset, the console is a public client and PKCE alone protects the code. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  RELAY_CONSOLE_OIDC_CLIENT_SECRET?: string;

  /** Where the provider sends people back; unset, `<RELAY_PUBLIC_URL>/admin/session/oidc/callback`. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] }, { message: 'RELAY_CONSOLE_OIDC_REDIRECT_URL must be an http(s) URL' })
  RELAY_CONSOLE_OIDC_REDIRECT_URL?: string;

  /** The ID token (or userinfo) claim that names a person's console role: admin, operator, viewer or auditor. */
  @IsString()
  @Matches(/^[A-Za-z0-9_:/.-]{1,200}$/, { message: 'RELAY_CONSOLE_OIDC_ROLE_CLAIM must be a claim name' })
  RELAY_CONSOLE_OIDC_ROLE_CLAIM: string = 'agentrelay_role';

  /** The claim that lists a person's groups, read with RELAY_CONSOLE_OIDC_GROUP_ROLES. */
  @IsString()
  @Matches(/^[A-Za-z0-9_:/.-]{1,200}$/, { message: 'RELAY_CONSOLE_OIDC_GROUPS_CLAIM must be a claim name' })
  RELAY_CONSOLE_OIDC_GROUPS_CLAIM: string = 'groups';

  /** JSON object group → role (e.g. `{"relay-admins":"admin","payments-approvers":"payments:approver"}`): relay-wide, or `org:role` in one org; a person in several groups gets each, the strongest per org. */
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? parseGroupRoles(value) : value))
  @ValidateBy({
    name: 'isGroupRoles',
    validator: {
      validate: isGroupRoles,
      defaultMessage: () =>
        'RELAY_CONSOLE_OIDC_GROUP_ROLES must be a JSON object of group names to roles (admin, operator, approver, viewer or auditor), relay-wide or as org:role',
    },
  })
  RELAY_CONSOLE_OIDC_GROUP_ROLES: Record<string, string> = {};

  /** Scopes asked of the provider besides `openid` (space-separated). */
  @IsString()
  @Matches(/^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$|^$/, { message: 'RELAY_CONSOLE_OIDC_SCOPES must be space-separated scope names' })
  RELAY_CONSOLE_OIDC_SCOPES: string = 'profile email';

  /** The built operator console the edge serves under `/console/` (relative to the working directory). */
  @IsString()
  @MinLength(1)
  RELAY_CONSOLE_DIR: string = 'dist/console';

  /** How long /readyz waits for each service's health answer. */
  @IsInt()
  @Min(50)
  @Max(30000)
  READINESS_TIMEOUT_MS: number = 1500;
}

/** The JSON of RELAY_CONSOLE_OIDC_GROUP_ROLES, or the raw string when it is not JSON (then refused by the validator). */
function parseGroupRoles(value: string): unknown {
  if (value.trim() === '') return {};
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function isGroupRoles(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value as Record<string, unknown>);
  return entries.length <= 1000 && entries.every(([group, role]) => group.length > 0 && group.length <= 256 && parseRoleGrant(role) !== undefined);
}

const PROXY_ADDRESS_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isTrustedProxy(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (PROXY_ADDRESS_NAMES.has(value) || isIP(value) !== 0) return true;
  const [address, prefix, ...rest] = value.split('/');
  const version = isIP(address);
  return rest.length === 0 && version !== 0 && /^\d{1,3}$/.test(prefix ?? '') && Number(prefix) <= (version === 4 ? 32 : 128);
}
