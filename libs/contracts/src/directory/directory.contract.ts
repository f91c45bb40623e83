import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsEmail,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { UpstreamInterfaceDto } from '../upstream/upstream.contract';
import type {
  AdmitReply,
  AgentIdentity,
  AgentPage,
  AgentProfile,
  AgentRecord,
  ApiKeyInfo,
  ApiKeyList,
  CreateAgentReply,
  CreateKeyReply,
  TokenSubject,
  TrustPolicy,
} from './agent.model';
import { AGENT_LIMITS, TASK_LIMITS } from '../limits';
import { MEDIA_RANGE_PATTERN } from '../media-types';
import { API_KEY_DISPLAY_PREFIX_PATTERN, HANDLE_PATTERN, normalizeHandle, TRUST_PATTERN } from './handle';
import { CHAIN_POLICY_SCHEMA, chainPolicyProblem, type ChainPolicy } from '../tasks/chain-rules';
import { HOLD_RULES_SCHEMA, holdRulesProblem, TOOL_PROMPT_RULES_SCHEMA, toolPromptRulesProblem, type HoldRule, type ToolPromptRule } from './hold-rules';

/** Request subjects the directory answers. */
export const DIRECTORY_SUBJECTS = {
  /** `{api_key}` → the key's agent; `unauthenticated` for a malformed, unknown or revoked key or a disabled agent. */
  authenticate: 'relay.directory.v1.authenticate',
  /**
   * `{issuer, subject, handle?}` of a JWT the edge verified → the agent it names: the agent the
   * (issuer, subject) is mapped to, else the one its handle claim names; `unauthenticated` with
   * `data.error = 'invalid_token'` when they disagree, name nobody, or the agent is disabled.
   */
  authenticateToken: 'relay.directory.v1.tokens.authenticate',
  /** `{sender, recipient}` → `{recipient}` when the recipient's trust policy admits the sender. */
  admit: 'relay.directory.v1.admit',
  /** Public profile of an enabled agent (agent cards); `agent_not_found` otherwise. */
  getProfile: 'relay.directory.v1.profiles.get',
  createAgent: 'relay.directory.v1.agents.create',
  listAgents: 'relay.directory.v1.agents.list',
  getAgent: 'relay.directory.v1.agents.get',
  updateAgent: 'relay.directory.v1.agents.update',
  disableAgent: 'relay.directory.v1.agents.disable',
  createKey: 'relay.directory.v1.keys.create',
  listKeys: 'relay.directory.v1.keys.list',
  revokeKey: 'relay.directory.v1.keys.revoke',
  putTrust: 'relay.directory.v1.trust.put',
  getTrust: 'relay.directory.v1.trust.get',
  /** `{handle, issuer, subject}` maps a token subject to the agent (both null: unmapped). */
  putTokenSubject: 'relay.directory.v1.token_subjects.put',
  /**
   * The notifier's refresh of an upstream agent's card: the profile fields the card changed and when
   * it was read. Any other change of the interface deliveries use is refused (it waits for an
   * operator: `acceptUpstream`); an agent that is not an upstream agent is refused.
   */
  putUpstream: 'relay.directory.v1.agents.upstream.put',
  /** An operator accepted a pending card change (admin API): the interface deliveries use from here on. */
  acceptUpstream: 'relay.directory.v1.agents.upstream.accept',
} as const;

/**
 * Core NATS subject (not a request) on which the directory announces, after commit, that an
 * identity, key or trust decision may have changed: edges drop what they cached from the directory.
 */
export const DIRECTORY_CHANGES_SUBJECT = 'relay.directory.v1.changes';

/** What changed, for logs; receivers drop every cached directory answer whatever it says. */
export interface DirectoryChange {
  kind: 'agent_updated' | 'agent_disabled' | 'key_revoked' | 'trust_changed' | 'token_subject_changed' | 'org_updated';
  handle: string;
}

/** URLs are stored as written, and the stores admit only the lowercase spelling of the scheme. */
const LOWERCASE_HTTP_SCHEME = /^https?:\/\//;
const HTTP_URL = { require_tld: false, require_protocol: true, protocols: ['http', 'https'] };
const HANDLE_MESSAGE = { message: 'handle must be name@org: lowercase letters, digits, ".", "_" or "-"' };
const TRUST_MESSAGE = { each: true, message: 'each entry must be a handle (name@org) or *@org' };

const lowercaseList = ({ value }: { value: unknown }): unknown => (Array.isArray(value) ? value.map(normalizeHandle) : value);

/** Hold rules as HOLD_RULES_SCHEMA reads them (trimmed, senders lowercased); what it refuses is left for the check to name. */
const parsedHoldRules = ({ value }: { value: unknown }): unknown => {
  const parsed = HOLD_RULES_SCHEMA.safeParse(value);
  return parsed.success ? parsed.data : value;
};

/** A list of hold rules (docs/decisions/0024-held-handoffs.md), checked by the one schema that describes them. */
export function IsHoldRules(): PropertyDecorator {
  return ValidateBy({
    name: 'isHoldRules',
    validator: {
      validate: (value: unknown) => holdRulesProblem(value) === null,
      defaultMessage: (args) => `${args?.property ?? 'hold'}${holdRulesProblem(args?.value) ?? ''}`,
    },
  });
}

const parsedToolPromptRules = ({ value }: { value: unknown }): unknown => {
  const parsed = TOOL_PROMPT_RULES_SCHEMA.safeParse(value);
  return parsed.success ? parsed.data : value;
};

/** A list of tool-prompt rules (docs/decisions/0031-tool-prompts-answered-by-people.md), checked by the one schema that describes them. */
export function IsToolPromptRules(): PropertyDecorator {
  return ValidateBy({
    name: 'isToolPromptRules',
    validator: {
      validate: (value: unknown) => toolPromptRulesProblem(value) === null,
      defaultMessage: (args) => `${args?.property ?? 'tool_prompts'}${toolPromptRulesProblem(args?.value) ?? ''}`,
    },
  });
}

/**
 * The owner of an agent: the `sub` of their account at the console's OpenID Provider, and its
 * issuer (the edge fills in the console's, RELAY_CONSOLE_OIDC_ISSUER, when the admin names none).
 */
export class AgentOwnerFields {
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(AGENT_LIMITS.tokenIssuerChars)
  issuer?: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(AGENT_LIMITS.tokenSubjectChars)
  subject: string;
}

/** A chain policy as its schema reads it (handles trimmed, lowercased); what does not parse is left for the validator to name. */
export const parsedChainPolicy = ({ value }: { value: unknown }): unknown => {
  const parsed = CHAIN_POLICY_SCHEMA.safeParse(value);
  return parsed.success ? parsed.data : value;
};

/** A trust policy's own chain bounds (docs/chains.md), checked by the one schema that describes them. */
export function IsChainPolicy(): PropertyDecorator {
  return ValidateBy({
    name: 'isChainPolicy',
    validator: {
      validate: (value: unknown) => chainPolicyProblem(value) === null,
      defaultMessage: (args) => `${args?.property ?? 'chain'}${chainPolicyProblem(args?.value) ?? ''}`,
    },
  });
}

/** Private and public fields an admin may set on an agent (all optional; `null` clears a field). */
export class AgentFields {
  @IsOptional()
  @IsString()
  @MaxLength(AGENT_LIMITS.roleChars)
  role?: string | null;

  @IsOptional()
  @IsString()
  @MaxLength(AGENT_LIMITS.descriptionChars)
  description?: string | null;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(AGENT_LIMITS.skills)
  @IsString({ each: true })
  @IsNotEmpty({ each: true })
  @MaxLength(AGENT_LIMITS.skillChars, { each: true })
  skills?: string[];

  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown>;

  /** Media types or ranges (`text/plain`, `image/*`, or `*\/*` for anything) the agent accepts in parts sent to it; null restores the relay default. */
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(AGENT_LIMITS.inputModes)
  @IsString({ each: true })
  @MaxLength(TASK_LIMITS.mediaTypeChars, { each: true })
  @Matches(MEDIA_RANGE_PATTERN, { each: true, message: 'each entry of input_modes must be a media type or range such as text/plain, image/* or */*' })
  input_modes?: string[] | null;

  @IsOptional()
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(AGENT_LIMITS.emailChars)
  email?: string | null;

  /** The person who owns the agent (four eyes refuse them); on registration through a console sign-in, that person by default. */
  @IsOptional()
  @ValidateNested()
  @Type(() => AgentOwnerFields)
  owner?: AgentOwnerFields | null;

  @IsOptional()
  @IsUrl(HTTP_URL, { message: 'notification_webhook_url must be an http(s) URL' })
  @Matches(LOWERCASE_HTTP_SCHEME, { message: 'notification_webhook_url must start with http:// or https:// (lowercase scheme)' })
  @MaxLength(AGENT_LIMITS.webhookUrlChars)
  notification_webhook_url?: string | null;

  @IsOptional()
  @IsUrl(HTTP_URL, { message: 'slack_webhook_url must be an http(s) URL' })
  @Matches(LOWERCASE_HTTP_SCHEME, { message: 'slack_webhook_url must start with http:// or https:// (lowercase scheme)' })
  @MaxLength(AGENT_LIMITS.webhookUrlChars)
  slack_webhook_url?: string | null;

  /** How long the notifier waits for this agent's webhook and push receivers to answer (1–30 s); null: the relay's default. */
  @IsOptional()
  @IsInt({ message: 'webhook_timeout_ms must be a whole number of milliseconds' })
  @Min(AGENT_LIMITS.webhookTimeoutMinMs, { message: `webhook_timeout_ms must be at least ${AGENT_LIMITS.webhookTimeoutMinMs}` })
  @Max(AGENT_LIMITS.webhookTimeoutMaxMs, { message: `webhook_timeout_ms must be at most ${AGENT_LIMITS.webhookTimeoutMaxMs}` })
  webhook_timeout_ms?: number | null;
}

export class CreateAgentRequest extends AgentFields {
  @Transform(({ value }) => normalizeHandle(value))
  @IsString()
  @MaxLength(AGENT_LIMITS.handleChars)
  @Matches(HANDLE_PATTERN, HANDLE_MESSAGE)
  handle: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(AGENT_LIMITS.nameChars)
  name: string;
}

/** The directory's create: an admin's registration, with the upstream interface the notifier read from the agent's card. */
export class CreateAgentCommand extends CreateAgentRequest {
  @IsOptional()
  @ValidateNested()
  @Type(() => UpstreamInterfaceDto)
  upstream?: UpstreamInterfaceDto;

  /** The notifier's registration of the upstream (`upstream.resolve`), committed with the new agent's webhook secret. */
  @ValidateIf((command: CreateAgentCommand) => command.upstream !== undefined)
  @IsUUID()
  upstream_registration?: string;

  /** Set by the edge, never from a request body: `email` is the owner's own, verified by the provider at their sign-in. */
  @IsOptional()
  @IsBoolean()
  email_verified?: boolean;
}

/** The body of an update: any agent field, and the name (which cannot be cleared). */
export class UpdateAgentFields extends AgentFields {
  @ValidateIf((request: UpdateAgentFields) => request.name !== undefined)
  @IsString()
  @IsNotEmpty()
  @MaxLength(AGENT_LIMITS.nameChars)
  name?: string;
}

export class UpdateAgentRequest extends UpdateAgentFields {
  @Transform(({ value }) => normalizeHandle(value))
  @IsString()
  handle: string;

  /** Set by the edge with a new `email`, never from a request body: the owner's own, verified by the provider at their sign-in. */
  @IsOptional()
  @IsBoolean()
  email_verified?: boolean;
}

/** `acceptUpstream`: the upstream interface an operator accepted. */
export class AcceptAgentUpstreamRequest {
  @Transform(({ value }) => normalizeHandle(value))
  @IsString()
  handle: string;

  @ValidateNested()
  @Type(() => UpstreamInterfaceDto)
  upstream: UpstreamInterfaceDto;
}

/** `putUpstream`: the agent's upstream interface as refreshed (only `card_fetched_at` may differ) and, when the card changed them, its name, description and skills. */
export class PutAgentUpstreamRequest {
  @Transform(({ value }) => normalizeHandle(value))
  @IsString()
  handle: string;

  @ValidateNested()
  @Type(() => UpstreamInterfaceDto)
  upstream: UpstreamInterfaceDto;

  @IsOptional()
  @IsString()
  @IsNotEmpty()
  name?: string;

  @IsOptional()
  @IsString()
  description?: string | null;

  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  @IsNotEmpty({ each: true })
  skills?: string[];
}

export class HandleRequest {
  @Transform(({ value }) => normalizeHandle(value))
  @IsString()
  @MaxLength(AGENT_LIMITS.handleChars)
  handle: string;
}

export class AuthenticateRequest {
  @IsString()
  api_key: string;
}

export class AuthenticateTokenRequest {
  @IsString()
  issuer: string;

  @IsString()
  subject: string;

  /** The handle claim of the token, when it has one. */
  @IsOptional()
  @IsString()
  handle?: string;
}

/** The admin API's body of `PUT /admin/agents/{handle}/token-subject`. */
export class TokenSubjectFields {
  @IsString()
  @IsNotEmpty()
  @MaxLength(AGENT_LIMITS.tokenIssuerChars)
  issuer: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(AGENT_LIMITS.tokenSubjectChars)
  subject: string;
}

export class PutTokenSubjectRequest {
  @Transform(({ value }) => normalizeHandle(value))
  @IsString()
  handle: string;

  @ValidateIf((_, value) => value !== null)
  @IsString()
  @IsNotEmpty()
  issuer: string | null;

  @ValidateIf((_, value) => value !== null)
  @IsString()
  @IsNotEmpty()
  subject: string | null;
}

export class AdmitRequest {
  @Transform(({ value }) => normalizeHandle(value))
  @IsString()
  sender: string;

  @Transform(({ value }) => normalizeHandle(value))
  @IsString()
  recipient: string;
}

export class ListAgentsRequest {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;

  @IsOptional()
  @IsString()
  @MaxLength(512)
  cursor?: string;

  @IsOptional()
  @Transform(({ obj, key }: { obj: Record<string, unknown>; key: string }) => (obj[key] === 'true' ? true : obj[key] === 'false' ? false : obj[key]))
  @IsBoolean()
  include_disabled?: boolean;

  /** Only agents of these orgs (a person's scope, set by the edge); absent: every agent. */
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  orgs?: string[];
}

export class RevokeKeyRequest extends HandleRequest {
  @IsString()
  @Matches(API_KEY_DISPLAY_PREFIX_PATTERN, { message: 'prefix must be a key display prefix (ah_live_ and 8 characters)' })
  prefix: string;
}

/** A trust policy as an admin writes it (JSON body or the `trust.yaml` file). */
export class TrustPolicyFields {
  @IsOptional()
  @Transform(lowercaseList)
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @Matches(TRUST_PATTERN, TRUST_MESSAGE)
  allow?: string[];

  @IsOptional()
  @Transform(lowercaseList)
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @Matches(TRUST_PATTERN, TRUST_MESSAGE)
  block?: string[];

  /** Rules that hold a handoff for a person's approval instead of delivering it (checked after allow and block). */
  @IsOptional()
  @Transform(parsedHoldRules)
  @IsHoldRules()
  hold?: HoldRule[];

  /** Rules naming the handoffs whose coding agents' tool prompts people answer instead of the sender. */
  @IsOptional()
  @Transform(parsedToolPromptRules)
  @IsToolPromptRules()
  tool_prompts?: ToolPromptRule[];

  /** The recipient's own chain bounds, each replacing the relay's for handoffs to it (docs/chains.md). */
  @IsOptional()
  @Transform(parsedChainPolicy)
  @IsChainPolicy()
  chain?: ChainPolicy;
}

export class PutTrustRequest extends TrustPolicyFields {
  @Transform(({ value }) => normalizeHandle(value))
  @IsString()
  handle: string;
}

export interface DirectoryRpc {
  [DIRECTORY_SUBJECTS.authenticate]: { request: AuthenticateRequest; reply: AgentIdentity };
  [DIRECTORY_SUBJECTS.admit]: { request: AdmitRequest; reply: AdmitReply };
  [DIRECTORY_SUBJECTS.getProfile]: { request: HandleRequest; reply: AgentProfile };
  [DIRECTORY_SUBJECTS.createAgent]: { request: CreateAgentCommand; reply: CreateAgentReply };
  [DIRECTORY_SUBJECTS.listAgents]: { request: ListAgentsRequest; reply: AgentPage };
  [DIRECTORY_SUBJECTS.getAgent]: { request: HandleRequest; reply: AgentRecord };
  [DIRECTORY_SUBJECTS.updateAgent]: { request: UpdateAgentRequest; reply: AgentRecord };
  [DIRECTORY_SUBJECTS.putUpstream]: { request: PutAgentUpstreamRequest; reply: AgentRecord };
  [DIRECTORY_SUBJECTS.acceptUpstream]: { request: AcceptAgentUpstreamRequest; reply: AgentRecord };
  [DIRECTORY_SUBJECTS.disableAgent]: { request: HandleRequest; reply: AgentRecord };
  [DIRECTORY_SUBJECTS.createKey]: { request: HandleRequest; reply: CreateKeyReply };
  [DIRECTORY_SUBJECTS.listKeys]: { request: HandleRequest; reply: ApiKeyList };
  [DIRECTORY_SUBJECTS.revokeKey]: { request: RevokeKeyRequest; reply: ApiKeyInfo };
  [DIRECTORY_SUBJECTS.putTrust]: { request: PutTrustRequest; reply: TrustPolicy };
  [DIRECTORY_SUBJECTS.getTrust]: { request: HandleRequest; reply: TrustPolicy };
  [DIRECTORY_SUBJECTS.authenticateToken]: { request: AuthenticateTokenRequest; reply: AgentIdentity };
  [DIRECTORY_SUBJECTS.putTokenSubject]: { request: PutTokenSubjectRequest; reply: TokenSubject };
}
