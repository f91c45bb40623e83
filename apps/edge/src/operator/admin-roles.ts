import { SetMetadata } from '@nestjs/common';

import { ADMIN_ROLES, isAdminRole, normalizeGrants, parseRoleGrant, roleAllows, type AdminRole, type RoleGrant } from '@app/contracts';

export { ADMIN_ROLES, isAdminRole, roleAllows, type AdminRole };

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
 * A person's roles from their claims: the role claim's grants when it names any (`approver`
 * relay-wide, `payments:approver` in one org; one value or a list), else the grants
 * RELAY_CONSOLE_OIDC_GROUP_ROLES gives their groups; empty when neither does. One grant per org,
 * its strongest role (normalizeGrants).
 */
export function grantsFromClaims(
  claims: Record<string, unknown>,
  settings: { roleClaim: string; groupsClaim: string; groupRoles: Record<string, string> },
): RoleGrant[] {
  const direct = claims[settings.roleClaim];
  const named = (Array.isArray(direct) ? direct : [direct]).map(parseRoleGrant).filter((grant) => grant !== undefined);
  const groups = claims[settings.groupsClaim];
  const fromGroups = (Array.isArray(groups) ? groups : typeof groups === 'string' ? [groups] : [])
    .filter((group): group is string => typeof group === 'string' && Object.prototype.hasOwnProperty.call(settings.groupRoles, group))
    .map((group) => parseRoleGrant(settings.groupRoles[group]))
    .filter((grant) => grant !== undefined);
  return normalizeGrants(named.length > 0 ? named : fromGroups);
}
