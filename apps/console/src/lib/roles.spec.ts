import { describe, expect, it } from '@jest/globals';
import { describeGrant, orgOfHandle, roleAllows, roleHidesBodies, roleInOrg } from './roles';

describe('console roles', () => {
  it('offers each role what the relay lets it do', () => {
    expect(roleAllows('viewer', 'auditor')).toBe(true);
    expect(roleAllows('viewer', 'operator')).toBe(false);
    expect(roleAllows('operator', 'operator')).toBe(true);
    expect(roleAllows('operator', 'admin')).toBe(false);
    expect(roleAllows('auditor', 'viewer')).toBe(false);
    expect(roleAllows('admin', 'admin')).toBe(true);
  });

  it('hides bodies from the auditor only', () => {
    expect((['auditor', 'viewer', 'approver', 'operator', 'admin'] as const).filter(roleHidesBodies)).toEqual(['auditor']);
  });
});

describe("a person's role in an org", () => {
  it("is the org's own or the relay-wide one, whichever is stronger; none for an org without either", () => {
    const grants = [
      { org: null, role: 'viewer' },
      { org: 'payments', role: 'approver' },
      { org: 'web', role: 'auditor' },
    ] as const;
    expect(roleInOrg(grants, 'payments')).toEqual({ role: 'approver', scoped: true });
    expect(roleInOrg(grants, 'web')).toEqual({ role: 'viewer', scoped: false });
    expect(roleInOrg(grants, 'ops')).toEqual({ role: 'viewer', scoped: false });
    expect(roleInOrg([{ org: 'payments', role: 'approver' }], 'web')).toBeNull();
  });

  it('reads the org of a handle and says a grant as the relay does', () => {
    expect(orgOfHandle('ana@payments')).toBe('payments');
    expect(describeGrant({ org: 'payments', role: 'approver' })).toBe('payments: approver');
    expect(describeGrant({ org: null, role: 'admin' })).toBe('relay-wide admin');
  });
});
