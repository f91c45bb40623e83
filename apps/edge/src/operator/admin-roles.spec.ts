import { ADMIN_ROLES, hidesBodies, roleAllows, roleFromClaims } from './admin-roles';

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

  it('gives no role for no claim, an unknown role, unmapped groups or inherited property names', () => {
    expect(roleFromClaims({}, settings)).toBeUndefined();
    expect(roleFromClaims({ agentrelay_role: 'root', groups: ['everyone'] }, settings)).toBeUndefined();
    expect(roleFromClaims({ groups: ['constructor', '__proto__', 'toString'] }, settings)).toBeUndefined();
    expect(roleFromClaims({ agentrelay_role: { admin: true }, groups: [{ name: 'relay-admins' }] }, settings)).toBeUndefined();
  });
});
