import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsIn, IsISO8601, IsNotEmpty, IsOptional, IsString, IsUrl, Matches, MaxLength, ValidateIf, ValidateNested } from 'class-validator';
import { normalizeHandle } from '../directory/handle';
import {
  UPSTREAM_AUTH_SCHEMES,
  UPSTREAM_BINDINGS,
  UPSTREAM_PROTOCOL_VERSIONS,
  type UpstreamAuthScheme,
  type UpstreamBinding,
  type UpstreamInterface,
  type UpstreamProtocolVersion,
} from './upstream.model';

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
 * The same, as the notifier hands it to the directory to store: `card_url` as the edge checked it
 * at registration, `url` and a card's API key header as the notifier's card reader bounds them
 * (UPSTREAM_LIMITS.urlChars, headerNameChars).
 */
export class UpstreamInterfaceDto implements UpstreamInterface {
  @IsUrl(HTTP_URL)
  card_url: string;

  @IsUrl(HTTP_URL)
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

/** The credential and client identity of an upstream agent, as an admin gives them (both write-only). */
export class UpstreamCredentialFields {
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

/** What an admin gives to connect an existing A2A agent: its card's URL and, if it needs one, a credential. */
export class UpstreamRegistrationFields extends UpstreamCredentialFields {
  @IsUrl(HTTP_URL, { message: 'upstream.card_url must be an http(s) URL' })
  @Matches(/^https?:\/\//, { message: 'upstream.card_url must start with http:// or https:// (lowercase scheme)' })
  @MaxLength(UPSTREAM_LIMITS.urlChars)
  card_url: string;
}

/**
 * `relay.notifier.v1.upstream.resolve`: read the card, pick the interface, keep the credential
 * sealed. The credential travels sealed to the notifier's key (decision 0026): a NATS subscriber
 * without that key reads no API key, client secret or private key.
 */
export class ResolveUpstreamRequest {
  @Transform(({ value }) => normalizeHandle(value))
  @IsString()
  handle: string;

  @IsUrl(HTTP_URL)
  card_url: string;

  /** `UpstreamCredentialFields` as JSON, sealed to the notifier's public key; absent: no credential and no client identity. */
  @IsOptional()
  @IsString()
  sealed_credentials?: string;
}

/** `relay.notifier.v1.upstream.tls.put`: replaces the agent's mTLS client identity (the next request uses it). */
export class PutUpstreamTlsRequest {
  @Transform(({ value }) => normalizeHandle(value))
  @IsString()
  handle: string;

  /** `UpstreamTlsFields` as JSON, sealed to the notifier's public key. */
  @IsString()
  sealed_tls: string;
}

export class UpstreamCallsRequest {
  /** A lookup key: a string that is no task's id matches no call. */
  @IsString()
  @IsNotEmpty()
  task_id: string;
}
