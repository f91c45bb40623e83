import { strongestRole } from '@app/contracts';
import { ADMIN_ROLES, grantsFromClaims, hidesBodies, roleAllows } from './admin-roles';

const roleFromClaims = (claims: Record<string, unknown>, given: typeof settings) => strongestRole(grantsFromClaims(claims, given));

const settings = {
  roleClaim: 'agentrelay_role',
  groupsClaim: 'groups',
  groupRoles: { 'relay-admins': 'admin', 'relay-ops': 'operator', readers: 'viewer', audit: 'auditor' },
};

describe('console roles', () => {
  it('orders the roles: each allows the routes of the weaker ones and none of the stronger', () => {
    expect(ADMIN_ROLES).toEqual(['auditor', 'viewer', 'approver', 'operator', 'admin']);
    const allowed = ADMIN_ROLES.map((role) => ADMIN_ROLES.filter((least) => roleAllows(role, least)));
    expect(allowed).toEqual([
      ['auditor'],
      ['auditor', 'viewer'],
      ['auditor', 'viewer', 'approver'],
      ['auditor', 'viewer', 'approver', 'operator'],
      ['auditor', 'viewer', 'approver', 'operator', 'admin'],
    ]);
  });

  it('hides message bodies from the auditor only', () => {
    expect(ADMIN_ROLES.filter(hidesBodies)).toEqual(['auditor']);
  });

  it('reads the role claim, a single value or a list (the strongest wins), before the groups', () => {
    expect(roleFromClaims({ agentrelay_role: 'viewer', groups: ['relay-admins'] }, settings)).toBe('viewer');
    expect(roleFromClaims({ agentrelay_role: ['auditor', 'operator'] }, settings)).toBe('operator');
  });

  it('maps groups to roles when the claim names none, the strongest group winning', () => {
    expect(roleFromClaims({ groups: ['audit', 'relay-ops', 'unrelated'] }, settings)).toBe('operator');
    expect(roleFromClaims({ agentrelay_role: 'superuser', groups: 'readers' }, settings)).toBe('viewer');
  });

  it('reads grants per org from the claim (org:role) and from groups, one per org, relay-wide roles covering weaker ones', () => {
    const scoped = { ...settings, groupRoles: { ...settings.groupRoles, 'pay-approvers': 'payments:approver', 'web-view': 'web:viewer' } };
    expect(grantsFromClaims({ agentrelay_role: ['payments:approver', 'web:viewer', 'payments:auditor'] }, scoped)).toEqual([
      { org: 'payments', role: 'approver' },
      { org: 'web', role: 'viewer' },
    ]);
    expect(grantsFromClaims({ groups: ['pay-approvers', 'web-view', 'readers'] }, scoped)).toEqual([
      { org: null, role: 'viewer' },
      { org: 'payments', role: 'approver' },
    ]);
    expect(grantsFromClaims({ agentrelay_role: 'operator' }, scoped)).toEqual([{ org: null, role: 'operator' }]);
    expect(grantsFromClaims({ agentrelay_role: ['-bad:admin', 'payments:root', 'Payments:viewer'] }, scoped)).toEqual([{ org: 'payments', role: 'viewer' }]);
  });

  it('gives no role for no claim, an unknown role, unmapped groups or inherited property names', () => {
    expect(roleFromClaims({}, settings)).toBeUndefined();
    expect(roleFromClaims({ agentrelay_role: 'root', groups: ['everyone'] }, settings)).toBeUndefined();
    expect(roleFromClaims({ groups: ['constructor', '__proto__', 'toString'] }, settings)).toBeUndefined();
    expect(roleFromClaims({ agentrelay_role: { admin: true }, groups: [{ name: 'relay-admins' }] }, settings)).toBeUndefined();
  });
});
