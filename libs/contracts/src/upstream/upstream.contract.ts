import { Transform, Type } from 'class-transformer';
import { z } from 'zod';
import { IsBoolean, IsIn, IsISO8601, IsNotEmpty, IsOptional, IsString, IsUrl, Matches, MaxLength, ValidateIf, ValidateNested } from 'class-validator';
import { AGENT_LIMITS } from '../limits';
import { normalizeHandle } from '../directory/handle';

/** The A2A protocol bindings the relay can deliver to (gRPC is not one of them). */
export const UPSTREAM_BINDINGS = ['JSONRPC', 'HTTP+JSON'] as const;
export type UpstreamBinding = (typeof UPSTREAM_BINDINGS)[number];

/** The A2A versions the relay speaks to an upstream agent. */
export const UPSTREAM_PROTOCOL_VERSIONS = ['0.3', '1.0'] as const;
export type UpstreamProtocolVersion = (typeof UPSTREAM_PROTOCOL_VERSIONS)[number];

/**
 * How the relay authenticates to an upstream agent: nothing, an API key in a header, an HTTP
 * bearer token, or OAuth2 client credentials (the relay gets bearer tokens from the token URL and
 * keeps them until they expire).
 */
export const UPSTREAM_AUTH_SCHEMES = ['none', 'api_key', 'bearer', 'oauth2'] as const;
export type UpstreamAuthScheme = (typeof UPSTREAM_AUTH_SCHEMES)[number];

export const UPSTREAM_LIMITS = {
  urlChars: 2048,
  headerNameChars: 128,
  clientIdChars: 255,
  scopeChars: 1024,
  secretChars: 4096,
  /** The largest agent card the relay reads. */
  cardBytes: 256 * 1024,
  /** A PEM certificate (with its chain) or private key. */
  pemChars: 32 * 1024,
  /** PEM CA certificates. */
  caChars: 128 * 1024,
} as const;

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
const HTTP_URL = { require_tld: false, require_protocol: true, protocols: ['http', 'https'] };

/**
 * The interface of an agent that runs its own A2A server, as the relay read it from the agent's
 * card: where it delivers the agent's handoffs, in which binding and version, and how it
 * authenticates there (the credential itself is kept sealed by the notifier, never here).
 */
export const upstreamInterfaceSchema = z
  .object({
    card_url: z.string(),
    url: z.string(),
    binding: z.enum(UPSTREAM_BINDINGS),
    protocol_version: z.enum(UPSTREAM_PROTOCOL_VERSIONS),
    streaming: z.boolean(),
    push_notifications: z.boolean(),
    auth_scheme: z.enum(UPSTREAM_AUTH_SCHEMES),
    auth_header: z.string().nullable().meta({ description: 'The header an `api_key` goes in (`Authorization` for `bearer` and `oauth2`, null for `none`).' }),
    card_fetched_at: z.string(),
  })
  .meta({ title: 'UpstreamInterface' });
export type UpstreamInterface = z.infer<typeof upstreamInterfaceSchema>;

/** The same, as the directory checks it when it stores an agent's upstream. */
export class UpstreamInterfaceDto implements UpstreamInterface {
  @IsUrl(HTTP_URL)
  @MaxLength(UPSTREAM_LIMITS.urlChars)
  card_url: string;

  @IsUrl(HTTP_URL)
  @MaxLength(UPSTREAM_LIMITS.urlChars)
  url: string;

  @IsIn(UPSTREAM_BINDINGS)
  binding: UpstreamBinding;

  @IsIn(UPSTREAM_PROTOCOL_VERSIONS)
  protocol_version: UpstreamProtocolVersion;

  @IsBoolean()
  streaming: boolean;

  @IsBoolean()
  push_notifications: boolean;

  @IsIn(UPSTREAM_AUTH_SCHEMES)
  auth_scheme: UpstreamAuthScheme;

  @ValidateIf((_, value) => value !== null)
  @IsString()
  @MaxLength(UPSTREAM_LIMITS.headerNameChars)
  auth_header: string | null;

  @IsISO8601()
  card_fetched_at: string;
}

/** The credential for an upstream agent, as an admin gives it (write-only: never shown again). */
export class UpstreamAuthFields {
  @IsIn(UPSTREAM_AUTH_SCHEMES.filter((scheme) => scheme !== 'none'), { message: 'auth.scheme must be api_key, bearer or oauth2' })
  scheme: Exclude<UpstreamAuthScheme, 'none'>;

  /** `oauth2` only: the client the relay is at the authorization server. */
  @ValidateIf((fields: UpstreamAuthFields) => fields.scheme === 'oauth2' || fields.client_id !== undefined)
  @IsString({ message: 'auth.client_id is required with auth.scheme oauth2' })
  @IsNotEmpty({ message: 'auth.client_id is required with auth.scheme oauth2' })
  @MaxLength(UPSTREAM_LIMITS.clientIdChars)
  @Matches(/^[\x21-\x7e]+$/, { message: 'auth.client_id must be printable ASCII without spaces' })
  client_id?: string;

  /** `oauth2` only: the token endpoint (default: the card's OAuth2 client-credentials `tokenUrl`). */
  @IsOptional()
  @IsUrl(HTTP_URL, { message: 'auth.token_url must be an http(s) URL' })
  @MaxLength(UPSTREAM_LIMITS.urlChars)
  token_url?: string;

  /** `oauth2` only: the scopes asked for, space-separated. */
  @IsOptional()
  @IsString()
  @MaxLength(UPSTREAM_LIMITS.scopeChars)
  @Matches(/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/, { message: 'auth.scope must be scope tokens separated by single spaces' })
  scope?: string;

  /** `oauth2` only: the resource indicator (RFC 8707) the tokens are for, when the server wants one. */
  @IsOptional()
  @IsUrl(HTTP_URL, { message: 'auth.resource must be an http(s) URL' })
  @MaxLength(UPSTREAM_LIMITS.urlChars)
  resource?: string;

  /** `api_key` only: the header it goes in (the card's `apiKeySecurityScheme.name`; default `X-API-Key`). */
  @IsOptional()
  @IsString()
  @MaxLength(UPSTREAM_LIMITS.headerNameChars)
  @Matches(HEADER_NAME, { message: 'auth.header_name must be an HTTP header name' })
  header_name?: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(UPSTREAM_LIMITS.secretChars)
  /** The API key, the bearer token, or (oauth2) the client secret. */
  @Matches(/^[\x21-\x7e]+$/, { message: 'auth.secret must be printable ASCII without spaces' })
  secret: string;
}

/** The PEM documents of an mTLS client identity, as an admin gives them (the key is write-only: never shown again). */
export class UpstreamTlsFields {
  @IsString()
  @MaxLength(UPSTREAM_LIMITS.pemChars)
  @Matches(/-----BEGIN CERTIFICATE-----/, { message: 'tls.client_cert must be a PEM certificate (-----BEGIN CERTIFICATE-----)' })
  client_cert: string;

  @IsString()
  @MaxLength(UPSTREAM_LIMITS.pemChars)
  @Matches(/-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/, { message: 'tls.client_key must be a PEM private key (-----BEGIN PRIVATE KEY-----)' })
  client_key: string;

  /** The CAs the upstream's server certificate is checked against instead of the system's (a private CA). */
  @IsOptional()
  @IsString()
  @MaxLength(UPSTREAM_LIMITS.caChars)
  @Matches(/-----BEGIN CERTIFICATE-----/, { message: 'tls.ca must be PEM certificates (-----BEGIN CERTIFICATE-----)' })
  ca?: string;
}

/** What an admin gives to connect an existing A2A agent: its card's URL and, if it needs one, a credential. */
export class UpstreamRegistrationFields {
  @IsUrl(HTTP_URL, { message: 'upstream.card_url must be an http(s) URL' })
  @Matches(/^https?:\/\//, { message: 'upstream.card_url must start with http:// or https:// (lowercase scheme)' })
  @MaxLength(UPSTREAM_LIMITS.urlChars)
  card_url: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => UpstreamAuthFields)
  auth?: UpstreamAuthFields;

  /** A client certificate for mTLS with the upstream (every call: card, A2A, token URL on the same host). */
  @IsOptional()
  @ValidateNested()
  @Type(() => UpstreamTlsFields)
  tls?: UpstreamTlsFields;
}

/** `relay.notifier.v1.upstream.resolve`: read the card, pick the interface, keep the credential sealed. */
export class ResolveUpstreamRequest extends UpstreamRegistrationFields {
  @Transform(({ value }) => normalizeHandle(value))
  @IsString()
  @MaxLength(AGENT_LIMITS.handleChars)
  handle: string;
}

/** The public profile the card offers (a registration without its own name, description or skills takes these). */
export interface UpstreamCardProfile {
  name: string;
  description: string | null;
  skills: string[];
}

export interface ResolveUpstreamReply {
  upstream: UpstreamInterface;
  card: UpstreamCardProfile;
}

/** `relay.notifier.v1.upstream.tls.put`: replaces the agent's mTLS client identity (the next request uses it). */
export class PutUpstreamTlsRequest extends UpstreamTlsFields {
  @Transform(({ value }) => normalizeHandle(value))
  @IsString()
  @MaxLength(AGENT_LIMITS.handleChars)
  handle: string;
}

/** The card fields a refresh compares: a change to one marked `review` waits for an operator. */
export const UPSTREAM_CARD_FIELDS = [
  'url',
  'binding',
  'protocol_version',
  'streaming',
  'push_notifications',
  'security',
  'name',
  'description',
  'skills',
] as const;
export type UpstreamCardField = (typeof UPSTREAM_CARD_FIELDS)[number];

/** What the relay keeps of a card to compare the next read with (`security`: the card's security schemes and requirements, normalised). */
export interface UpstreamCardSnapshot {
  url: string;
  binding: UpstreamBinding;
  protocol_version: UpstreamProtocolVersion;
  streaming: boolean;
  push_notifications: boolean;
  security: unknown;
  name: string;
  description: string | null;
  skills: string[];
}

/** One field a refreshed card changed: what the relay delivers against (`old`) and what the card now says (`new`). */
export interface UpstreamCardChange {
  field: UpstreamCardField;
  old: unknown;
  new: unknown;
  /** True: it changes where or how the relay talks to the agent, or how it authenticates; it waits for an operator. */
  review: boolean;
}

/** A card change waiting for an operator: deliveries go on against the accepted card meanwhile. */
export interface UpstreamPendingChange {
  detected_at: string;
  card_fetched_at: string;
  /** Only the fields that need review (harmless ones took effect when read). */
  changes: UpstreamCardChange[];
}

export const UPSTREAM_CALL_METHODS = [
  'GetAgentCard',
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'CancelTask',
  'ListTasks',
  'SubscribeToTask',
  'OAuth2Token',
  'other',
] as const;
export type UpstreamCallMethod = (typeof UPSTREAM_CALL_METHODS)[number];

/**
 * How an upstream call ended: `ok`, or why not: `refused` (SSRF guard), `timeout`, `tls` (a
 * certificate refused either way), `connection`, `unauthorized` (401/403), `http_4xx`, `http_5xx`,
 * `a2a_error` (a JSON-RPC error in a 200 answer).
 */
export const UPSTREAM_CALL_OUTCOMES = ['ok', 'refused', 'timeout', 'tls', 'connection', 'unauthorized', 'http_4xx', 'http_5xx', 'a2a_error'] as const;
export type UpstreamCallOutcome = (typeof UPSTREAM_CALL_OUTCOMES)[number];

/** One HTTP request the relay made to an upstream agent's server for a relay task. */
export interface UpstreamCallView {
  at: string;
  handle: string;
  method: UpstreamCallMethod;
  outcome: UpstreamCallOutcome;
  status_code: number | null;
  /** Until the answer's headers (a stream's events come later). */
  duration_ms: number;
  error: string | null;
}

export class UpstreamCallsRequest {
  @IsString()
  @MaxLength(255)
  @Matches(/^\S+$/, { message: 'task_id must be a task id' })
  task_id: string;
}

export interface UpstreamCallsReply {
  /** Oldest first, at most the newest 500. */
  calls: UpstreamCallView[];
}

/** `refreshed`: what one refresh did. */
export type UpstreamRefreshOutcome = 'unchanged' | 'applied' | 'pending' | 'rejected_before' | 'failed';

/** An upstream agent's card and health, as the admin API shows it. */
export interface UpstreamStatusView {
  handle: string;
  /** The interface deliveries use (the accepted card). */
  upstream: UpstreamInterface;
  card: {
    last_refresh_at: string | null;
    /** Why the last refresh could not read or use the card (null: it could). */
    last_refresh_error: string | null;
    pending_change: UpstreamPendingChange | null;
  };
  tls: { client_cert_subject: string; client_cert_not_after: string; ca: boolean; updated_at: string } | null;
  health: {
    last_success_at: string | null;
    last_failure_at: string | null;
    last_failure_method: UpstreamCallMethod | null;
    last_failure_reason: string | null;
    /** The circuit breaker of the upstream's host and port, in the notifier replica that answered. */
    breaker: 'closed' | 'open' | 'half_open';
  };
}

export interface UpstreamRefreshReply extends UpstreamStatusView {
  refresh: { outcome: UpstreamRefreshOutcome; changes: UpstreamCardChange[]; error: string | null };
}

/** An operator's accept or reject: the agent as it is now, and the change decided. */
export interface UpstreamChangeDecisionReply extends UpstreamStatusView {
  decided: UpstreamPendingChange;
}
