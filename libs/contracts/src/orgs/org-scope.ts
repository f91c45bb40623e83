import { ORG_PATTERN } from './orgs.model';

/**
 * What a person (or the admin token) may do on the admin API, weakest first: an `auditor` reads
 * metadata and the audit log with every message body hidden, a `viewer` reads everything, an
 * `approver` also approves and denies held handoffs, an `operator` also redelivers, changes trust
 * and disables agents, an `admin` does everything (agents, keys, secrets). The admin token is always a relay-wide `admin`.
 */
export const ADMIN_ROLES = ['auditor', 'viewer', 'approver', 'operator', 'admin'] as const;
export type AdminRole = (typeof ADMIN_ROLES)[number];

export function isAdminRole(value: unknown): value is AdminRole {
  return typeof value === 'string' && (ADMIN_ROLES as readonly string[]).includes(value);
}

/** Whether `role` may do what needs `least`. */
export function roleAllows(role: AdminRole, least: AdminRole): boolean {
  return ADMIN_ROLES.indexOf(role) >= ADMIN_ROLES.indexOf(least);
}

/** A role a person holds in one org (`payments: approver`), or relay-wide (`org: null`, the roles before orgs). */
export interface RoleGrant {
  org: string | null;
  role: AdminRole;
}

/** A grant as a claim, a group mapping or the admin API writes it: `approver` (relay-wide) or `payments:approver`; undefined for anything else. */
export function parseRoleGrant(value: unknown): RoleGrant | undefined {
  if (typeof value !== 'string') return undefined;
  const separator = value.lastIndexOf(':');
  if (separator < 0) return isAdminRole(value.trim()) ? { org: null, role: value.trim() as AdminRole } : undefined;
  const org = value.slice(0, separator).trim().toLowerCase();
  const role = value.slice(separator + 1).trim();
  return ORG_PATTERN.test(org) && isAdminRole(role) ? { org, role } : undefined;
}

/** `payments: approver`, or `relay-wide admin`. */
export function describeGrant(grant: RoleGrant): string {
  return grant.org === null ? `relay-wide ${grant.role}` : `${grant.org}: ${grant.role}`;
}

function stronger(a: AdminRole | undefined, b: AdminRole): AdminRole {
  return a === undefined || roleAllows(b, a) ? b : a;
}

/** The grants without repeats: one per org, its strongest role; a relay-wide grant covers the same or weaker roles in every org. */
export function normalizeGrants(grants: readonly RoleGrant[]): RoleGrant[] {
  let relayWide: AdminRole | undefined;
  const perOrg = new Map<string, AdminRole>();
  for (const grant of grants) {
    if (grant.org === null) relayWide = stronger(relayWide, grant.role);
    else perOrg.set(grant.org, stronger(perOrg.get(grant.org), grant.role));
  }
  const scoped = [...perOrg]
    .filter(([, role]) => relayWide === undefined || !roleAllows(relayWide, role))
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([org, role]) => ({ org, role }));
  return [...(relayWide ? [{ org: null, role: relayWide }] : []), ...scoped];
}

/** The strongest role the grants give in `org` (a relay-wide grant counts in every org); undefined: none. */
export function roleIn(grants: readonly RoleGrant[], org: string): AdminRole | undefined {
  let role: AdminRole | undefined;
  for (const grant of grants) if (grant.org === null || grant.org === org) role = stronger(role, grant.role);
  return role;
}

/** The strongest role of any grant: what a route's least role is checked against before its scope. */
export function strongestRole(grants: readonly RoleGrant[]): AdminRole | undefined {
  let role: AdminRole | undefined;
  for (const grant of grants) role = stronger(role, grant.role);
  return role;
}

/** Whether every org is in the grants' scope for what needs `least` (a relay-wide grant strong enough). */
export function isRelayWide(grants: readonly RoleGrant[], least: AdminRole): boolean {
  return grants.some((grant) => grant.org === null && roleAllows(grant.role, least));
}

export type ScopeDecision =
  | { allowed: true }
  /** No role in any of the object's orgs: the object is not shown to exist (404). */
  | { allowed: false; refusal: 'not_found' }
  /** A role in the object's org, too weak: 403 naming the org and the role. */
  | { allowed: false; refusal: 'forbidden'; org: string; role: AdminRole };

/**
 * Whether the grants may do what needs `least` to an object that belongs to `orgs`: an agent, key,
 * trust policy or upstream credential belongs to its handle's org; a handoff, to read it, to the
 * orgs of both its parties; a held handoff, to decide it, to the org whose rule held it (its
 * recipient's). Allowed when one of them gives a role at least `least`.
 */
export function canActOn(grants: readonly RoleGrant[], least: AdminRole, orgs: readonly string[]): ScopeDecision {
  let weaker: { org: string; role: AdminRole } | undefined;
  for (const org of orgs) {
    const role = roleIn(grants, org);
    if (role === undefined) continue;
    if (roleAllows(role, least)) return { allowed: true };
    weaker ??= { org, role };
  }
  return weaker ? { allowed: false, refusal: 'forbidden', ...weaker } : { allowed: false, refusal: 'not_found' };
}

/** The orgs whose objects a list may show to the grants for what needs `least`: `all`, or the orgs named with a strong enough role. */
export function orgsInScope(grants: readonly RoleGrant[], least: AdminRole): 'all' | string[] {
  if (isRelayWide(grants, least)) return 'all';
  return [...new Set(grants.filter((grant) => grant.org !== null && roleAllows(grant.role, least)).map((grant) => grant.org as string))].sort();
}
