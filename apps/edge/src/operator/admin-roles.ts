import { SetMetadata } from '@nestjs/common';

/**
 * What a person (or the admin token) may do on the admin API, weakest first: an `auditor` reads
 * metadata and the audit log with every message body hidden, a `viewer` reads everything, an
 * `approver` also approves and denies held handoffs, an `operator` also redelivers, changes trust
 * and disables agents, an `admin` does everything (agents, keys, secrets). The admin token is always `admin`.
 */
export const ADMIN_ROLES = ['auditor', 'viewer', 'approver', 'operator', 'admin'] as const;
export type AdminRole = (typeof ADMIN_ROLES)[number];

export function isAdminRole(value: unknown): value is AdminRole {
  return typeof value === 'string' && (ADMIN_ROLES as readonly string[]).includes(value);
}

/** Whether `role` may use a route whose least role is `least`. */
export function roleAllows(role: AdminRole, least: AdminRole): boolean {
  return ADMIN_ROLES.indexOf(role) >= ADMIN_ROLES.indexOf(least);
}

/** Whether answers to `role` must leave out what agents wrote (message text, parts, artifacts' content, summaries). */
export function hidesBodies(role: AdminRole): boolean {
  return role === 'auditor';
}

export const LEAST_ROLE = 'agentrelay:admin-least-role';
export const PUBLIC_ADMIN_ROUTE = 'agentrelay:admin-public-route';

/** The least role an admin route needs; the admin guard refuses a weaker one with 403 `forbidden`. */
export function LeastRole(role: AdminRole): MethodDecorator & ClassDecorator {
  return SetMetadata(LEAST_ROLE, role);
}

/** An admin route anyone may call (signing in): declared, so that no route is public by omission. */
export function PublicAdminRoute(): MethodDecorator & ClassDecorator {
  return SetMetadata(PUBLIC_ADMIN_ROUTE, true);
}

/**
 * A person's role from their claims: the role claim when it names a role, else the strongest role
 * that RELAY_CONSOLE_OIDC_GROUP_ROLES gives one of their groups; undefined when neither does.
 */
export function roleFromClaims(
  claims: Record<string, unknown>,
  settings: { roleClaim: string; groupsClaim: string; groupRoles: Record<string, string> },
): AdminRole | undefined {
  const direct = claims[settings.roleClaim];
  const named = (Array.isArray(direct) ? direct : [direct]).filter(isAdminRole);
  const groups = claims[settings.groupsClaim];
  const fromGroups = (Array.isArray(groups) ? groups : typeof groups === 'string' ? [groups] : [])
    .filter((group): group is string => typeof group === 'string' && Object.prototype.hasOwnProperty.call(settings.groupRoles, group))
    .map((group) => settings.groupRoles[group])
    .filter(isAdminRole);
  const candidates = named.length > 0 ? named : fromGroups;
  if (candidates.length === 0) return undefined;
  return candidates.reduce((strongest, role) => (roleAllows(role, strongest) ? role : strongest));
}
