import type { ConsoleRole } from '../api/types';

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
