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
