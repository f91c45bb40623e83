import { Transform } from 'class-transformer';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { ORG_LIMITS, ORG_PATTERN, ORG_SUBJECTS, RelayError, roleIn, type AdminRole } from '@app/contracts';
import type { NatsRpcClient } from '@app/messaging';
import type { AdminPrincipal } from '../sign-in/admin-token.guard';

/** `?org=payments` on a list: only what belongs to that org (docs/orgs.md#the-console). */
export class OrgFilterQuery {
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' ? value.trim().toLowerCase() : value))
  @IsString()
  @MaxLength(ORG_LIMITS.nameChars)
  @Matches(ORG_PATTERN, { message: 'org must be an org: lowercase letters, digits, "." or "-" (not first), as after the @ of a handle' })
  org?: string;
}

/** What a list shows: the orgs it is bounded to (`all`: the whole relay) and the role that decides what it hides. */
export interface ListScope {
  orgs: 'all' | string[];
  role: AdminRole;
}

/**
 * The scope of a list whose query may name one org: without one, the caller's (as the guard
 * decided it); with one, that org alone and the caller's role there. An org none of the caller's
 * roles reaches is 404 `org_not_found`, exactly as one that does not exist, so a filter cannot tell
 * whether another org exists.
 */
export async function listScopeOf(rpc: NatsRpcClient, principal: AdminPrincipal, org: string | undefined): Promise<ListScope> {
  if (org === undefined) return { orgs: principal.orgs, role: principal.role };
  const notFound = new RelayError('org_not_found', `No org named ${org}`, { org, field: 'org' });
  if (principal.orgs !== 'all' && !principal.orgs.includes(org)) throw notFound;
  try {
    await rpc.request(ORG_SUBJECTS.get, { name: org });
  } catch (error) {
    throw error instanceof RelayError && error.reason === 'org_not_found' ? notFound : error;
  }
  return { orgs: [org], role: roleIn(principal.grants, org) ?? principal.role };
}
