import type { ConsoleRole, RoleGrant } from '../api/types';

/** The console roles, weakest first, as the relay orders them (docs/admin-api.md#roles). */
const ROLE_ORDER: readonly ConsoleRole[] = ['auditor', 'viewer', 'approver', 'operator', 'admin'];

/** Whether `role` may do what needs `least`: the relay refuses it otherwise, so the console does not offer it. */
export function roleAllows(role: ConsoleRole, least: ConsoleRole): boolean {
  return ROLE_ORDER.indexOf(role) >= ROLE_ORDER.indexOf(least);
}

/** Whether the relay leaves message bodies out of this role's answers. */
export function roleHidesBodies(role: ConsoleRole): boolean {
  return role === 'auditor';
}

/** The org a handle names: `payments` of `ana@payments`. */
export function orgOfHandle(handle: string): string {
  return handle.slice(handle.lastIndexOf('@') + 1);
}

/**
 * The strongest role the grants give in `org`, a relay-wide grant counting in every org, and
 * whether it is the org's own (`scoped`); null when none: the relay answers such an org's objects
 * as not found, and refuses acting on them (docs/orgs.md#what-each-scope-reaches).
 */
export function roleInOrg(grants: readonly RoleGrant[], org: string): { role: ConsoleRole; scoped: boolean } | null {
  let found: { role: ConsoleRole; scoped: boolean } | null = null;
  for (const grant of grants) {
    if (grant.org !== null && grant.org !== org) continue;
    if (!found || !roleAllows(found.role, grant.role)) found = { role: grant.role, scoped: grant.org !== null };
  }
  return found;
}

/** `payments: approver`, or `relay-wide admin`, as the relay says it. */
export function describeGrant(grant: RoleGrant): string {
  return grant.org === null ? `relay-wide ${grant.role}` : `${grant.org}: ${grant.role}`;
}
