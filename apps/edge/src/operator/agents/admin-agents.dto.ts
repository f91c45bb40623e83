import { Transform, Type } from 'class-transformer';
import { IsOptional, IsString, Matches, MaxLength, ValidateNested } from 'class-validator';
import {
  AGENT_LIMITS,
  CreateAgentRequest,
  ListAgentsRequest,
  normalizeHandle,
  ORG_LIMITS,
  ORG_PATTERN,
  TrustPolicyFields,
  UpstreamRegistrationFields,
} from '@app/contracts';

/**
 * `POST /admin/agents`: an agent, and for one that runs its own A2A server, `upstream`: the URL of
 * its agent card (read by the notifier through the SSRF guard) and the credential the relay
 * presents there (kept sealed, never shown).
 */
export class RegisterAgentBody extends CreateAgentRequest {
  @IsOptional()
  @ValidateNested()
  @Type(() => UpstreamRegistrationFields)
  upstream?: UpstreamRegistrationFields;
}

/**
 * A trust policy as `PUT /admin/agents/{handle}/trust` reads it, in JSON or as a `trust.yaml`
 * file, which may name its agent (`agent: frank@acme`); that name must match the URL.
 */
export class TrustPolicyBody extends TrustPolicyFields {
  @IsOptional()
  @Transform(({ value }) => normalizeHandle(value))
  @IsString()
  @MaxLength(AGENT_LIMITS.handleChars)
  agent?: string;
}

/** `GET /admin/agents?limit=&cursor=&include_disabled=&org=`: the directory's list, and one org by name. */
export class AdminAgentsQuery extends ListAgentsRequest {
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' ? value.trim().toLowerCase() : value))
  @IsString()
  @MaxLength(ORG_LIMITS.nameChars)
  @Matches(ORG_PATTERN, { message: 'org must be an org: lowercase letters, digits, "." or "-" (not first), as after the @ of a handle' })
  org?: string;
}
