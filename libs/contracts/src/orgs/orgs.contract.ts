import { Transform, Type } from 'class-transformer';
import {
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
  registerDecorator,
  type ValidationArguments,
} from 'class-validator';
import { IsChainPolicy, parsedChainPolicy, TrustPolicyFields } from '../directory/directory.contract';
import type { ChainPolicy } from '../tasks/chain-rules';
import { ORG_LIMITS, ORG_PATTERN, tenantProblem, type OrgPage, type OrgQuotasReply, type OrgRecord } from './orgs.model';

export * from './orgs.model';

/** Request subjects of the directory's orgs. */
export const ORG_SUBJECTS = {
  create: 'relay.directory.v1.orgs.create',
  list: 'relay.directory.v1.orgs.list',
  get: 'relay.directory.v1.orgs.get',
  update: 'relay.directory.v1.orgs.update',
  /** `{name}` → the org's quotas alone (the edge's hot path; all null for an org with no row). */
  quotas: 'relay.directory.v1.orgs.quotas',
} as const;

/** A string an org's tenant may be (tenantProblem), its message naming what is wrong. */
function IsTenant(): PropertyDecorator {
  return (target, propertyName) => {
    registerDecorator({
      name: 'isTenant',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => typeof value === 'string' && tenantProblem(value) === null,
        defaultMessage: (args?: ValidationArguments) =>
          typeof args?.value === 'string' ? (tenantProblem(args.value) ?? 'tenant is not valid') : 'tenant must be a string, or null for none',
      },
    });
  };
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

/** Where an org's held handoffs and tool prompts are announced; the notifier checks the URL further (its SSRF rules) and keeps it sealed. */
export class OrgNotificationsFields {
  /** The Slack incoming webhook of the org's approvers; null: none (the relay's channel, per RELAY_APPROVALS_SLACK_ORG_ONLY). */
  @ValidateIf((_, value) => value !== null)
  @IsOptional()
  @IsString({ message: 'notifications.approvals_slack_url must be an https URL, or null for none' })
  @MaxLength(ORG_LIMITS.approvalsSlackUrlChars)
  @Matches(/^https?:\/\/\S+$/i, { message: 'notifications.approvals_slack_url must be an https URL, or null for none' })
  approvals_slack_url?: string | null;
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

  /** Kept by the notifier, not the directory: the edge takes it out before it asks the directory. */
  @IsOptional()
  @ValidateNested()
  @Type(() => OrgNotificationsFields)
  notifications?: OrgNotificationsFields;

  /** The org's A2A tenant (TENANT_PATTERN, unique among orgs); null removes it. */
  @ValidateIf((_, value) => value !== null)
  @IsOptional()
  @IsTenant()
  tenant?: string | null;
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
