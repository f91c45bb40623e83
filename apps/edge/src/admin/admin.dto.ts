import { Transform } from 'class-transformer';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { AGENT_LIMITS, normalizeHandle, TrustPolicyFields } from '@app/contracts';

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
