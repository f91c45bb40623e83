import { Transform, Type } from 'class-transformer';
import { IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import { AGENT_LIMITS, CreateAgentRequest, normalizeHandle, TrustPolicyFields, UpstreamRegistrationFields } from '@app/contracts';

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
