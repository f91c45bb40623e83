import { Transform, Type } from 'class-transformer';
import { IsInt, IsNotEmpty, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateIf, ValidateNested } from 'class-validator';
import { IsChainPolicy, parsedChainPolicy, TrustPolicyFields } from '../directory/directory.contract';
import type { TrustPolicy } from '../directory/agent.model';
import type { ChainPolicy } from '../tasks/chain-rules';

/** An org's name: the part of a handle after `@` (the same rule as HANDLE_PATTERN's org, and a CHECK in the directory schema). */
export const ORG_PATTERN = /^[a-z0-9][a-z0-9.-]{0,126}$/;

export const ORG_LIMITS = {
  nameChars: 127,
  displayNameChars: 200,
  /** The most agents an org's quota may name. */
  maxAgentsQuota: 1_000_000,
  maxRequestsPerMinuteQuota: 10_000_000,
  maxOpenHandoffsQuota: 10_000_000,
  /** The most bytes an org's stored-bytes quota may name (1 TiB). */
  maxStoredBytesQuota: 1_099_511_627_776,
  maxUpstreamInFlightQuota: 10_000,
  listDefaultLimit: 50,
  listMaxLimit: 200,
} as const;

/** Request subjects of the directory's orgs. */
export const ORG_SUBJECTS = {
  create: 'relay.directory.v1.orgs.create',
  list: 'relay.directory.v1.orgs.list',
  get: 'relay.directory.v1.orgs.get',
  update: 'relay.directory.v1.orgs.update',
  /** `{name}` → the org's quotas alone (the edge's hot path; all null for an org with no row). */
  quotas: 'relay.directory.v1.orgs.quotas',
} as const;

/** How an org came to exist: an admin created it, or an agent was registered in it while none existed (RELAY_ORGS_EXPLICIT=false). */
export type OrgOrigin = 'admin' | 'first_use';

/** An org's limits; null: no limit of the org's own (the per-agent limits still apply). */
export interface OrgQuotas {
  /** Agents registered in the org, disabled ones included. */
  agents: number | null;
  /** Calls per minute across the org's agents, counted as each agent's own rate limit is (fixed one-minute windows). */
  requests_per_minute: number | null;
  /** Handoffs sent by the org's agents and not yet finished (OPEN_HANDOFF_STATES). */
  open_handoffs: number | null;
  /** Bytes of messages and artifacts the org's agents wrote into handoffs still stored (counted against the writer's org). */
  stored_bytes: number | null;
  /** Deliveries to the org's upstream agents that a notifier process attempts at once; more wait for a slot. */
  upstream_in_flight: number | null;
}

export interface OrgQuotasReply {
  org: string;
  quotas: OrgQuotas;
}

/** What an org gives its agents by default. */
export interface OrgDefaults {
  /** The trust policy an agent registered in the org starts with (allow, block, hold, tool_prompts, chain); null: the relay's (teammates only). */
  trust: Omit<TrustPolicy, 'handle' | 'updated_at'> | null;
}

export interface OrgRecord {
  name: string;
  display_name: string | null;
  defaults: OrgDefaults;
  quotas: OrgQuotas;
  /** Chain bounds for the handoffs to the org's agents, over the relay's and under each recipient's trust policy's (docs/chains.md); `{}`: none of its own. */
  chain: ChainPolicy;
  origin: OrgOrigin;
  /** Agents registered in the org now, disabled ones included. */
  agents: number;
  created_at: string;
  updated_at: string;
}

export interface OrgPage {
  items: OrgRecord[];
  next_cursor: string | null;
}

const ORG_MESSAGE = { message: 'name must be an org: lowercase letters, digits, "." or "-" (not first), as after the @ of a handle' };

export class OrgQuotaFields {
  @ValidateIf((_, value) => value !== null)
  @IsOptional()
  @IsInt({ message: 'quotas.agents must be a whole number of agents, or null for no limit' })
  @Min(0)
  @Max(ORG_LIMITS.maxAgentsQuota)
  agents?: number | null;

  @ValidateIf((_, value) => value !== null)
  @IsOptional()
  @IsInt({ message: 'quotas.requests_per_minute must be a whole number of calls, or null for no limit' })
  @Min(1)
  @Max(ORG_LIMITS.maxRequestsPerMinuteQuota)
  requests_per_minute?: number | null;

  @ValidateIf((_, value) => value !== null)
  @IsOptional()
  @IsInt({ message: 'quotas.open_handoffs must be a whole number of handoffs, or null for no limit' })
  @Min(0)
  @Max(ORG_LIMITS.maxOpenHandoffsQuota)
  open_handoffs?: number | null;

  @ValidateIf((_, value) => value !== null)
  @IsOptional()
  @IsInt({ message: 'quotas.stored_bytes must be a whole number of bytes, or null for no limit' })
  @Min(0)
  @Max(ORG_LIMITS.maxStoredBytesQuota)
  stored_bytes?: number | null;

  @ValidateIf((_, value) => value !== null)
  @IsOptional()
  @IsInt({ message: 'quotas.upstream_in_flight must be a whole number of deliveries, or null for no limit' })
  @Min(1)
  @Max(ORG_LIMITS.maxUpstreamInFlightQuota)
  upstream_in_flight?: number | null;
}

export class OrgDefaultsFields {
  /** The trust policy new agents of the org start with; null: the relay's. */
  @ValidateIf((_, value) => value !== null)
  @IsOptional()
  @ValidateNested()
  @Type(() => TrustPolicyFields)
  trust?: TrustPolicyFields | null;
}

/** What an admin may set on an org (all optional; null clears a field). */
export class OrgFields {
  @ValidateIf((_, value) => value !== null)
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(ORG_LIMITS.displayNameChars)
  display_name?: string | null;

  @IsOptional()
  @ValidateNested()
  @Type(() => OrgDefaultsFields)
  defaults?: OrgDefaultsFields;

  @IsOptional()
  @ValidateNested()
  @Type(() => OrgQuotaFields)
  quotas?: OrgQuotaFields;

  /** The org's chain bounds, the fields of a trust policy's `chain`; null clears them. */
  @ValidateIf((_, value) => value !== null)
  @IsOptional()
  @Transform(parsedChainPolicy)
  @IsChainPolicy()
  chain?: ChainPolicy | null;
}

export class CreateOrgRequest extends OrgFields {
  @Transform(({ value }) => (typeof value === 'string' ? value.trim().toLowerCase() : value))
  @IsString()
  @MaxLength(ORG_LIMITS.nameChars)
  @Matches(ORG_PATTERN, ORG_MESSAGE)
  name: string;
}

export class OrgNameRequest {
  @Transform(({ value }) => (typeof value === 'string' ? value.trim().toLowerCase() : value))
  @IsString()
  @MaxLength(ORG_LIMITS.nameChars)
  name: string;
}

export class UpdateOrgRequest extends OrgFields {
  @Transform(({ value }) => (typeof value === 'string' ? value.trim().toLowerCase() : value))
  @IsString()
  @MaxLength(ORG_LIMITS.nameChars)
  name: string;
}

/** The admin API's query of `GET /admin/orgs`. */
export class ListOrgsQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(ORG_LIMITS.listMaxLimit)
  limit?: number;

  @IsOptional()
  @IsString()
  @MaxLength(512)
  cursor?: string;
}

export class ListOrgsRequest extends ListOrgsQuery {
  /** Only these orgs (a scoped person's); absent: every org. */
  @IsOptional()
  @IsString({ each: true })
  only?: string[];
}

export interface OrgsRpc {
  [ORG_SUBJECTS.create]: { request: CreateOrgRequest; reply: OrgRecord };
  [ORG_SUBJECTS.list]: { request: ListOrgsRequest; reply: OrgPage };
  [ORG_SUBJECTS.get]: { request: OrgNameRequest; reply: OrgRecord };
  [ORG_SUBJECTS.update]: { request: UpdateOrgRequest; reply: OrgRecord };
  [ORG_SUBJECTS.quotas]: { request: OrgNameRequest; reply: OrgQuotasReply };
}
