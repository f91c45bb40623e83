import { canActOn, normalizeGrants, orgsInScope, parseRoleGrant, roleIn, strongestRole, type RoleGrant } from './org-scope';

const payments: RoleGrant[] = [{ org: 'payments', role: 'approver' }];
const mixed: RoleGrant[] = [
  { org: 'payments', role: 'operator' },
  { org: 'web', role: 'auditor' },
];

describe('the org scope of a person’s roles (canActOn)', () => {
  it('reads relay-wide and per-org grants', () => {
    expect(parseRoleGrant('viewer')).toEqual({ org: null, role: 'viewer' });
    expect(parseRoleGrant('payments:approver')).toEqual({ org: 'payments', role: 'approver' });
    expect(parseRoleGrant(' Pay.Ments : admin ')).toEqual({ org: 'pay.ments', role: 'admin' });
    for (const bad of ['root', 'payments:', ':admin', '-x:admin', 'a:b:c', 42, null]) expect(parseRoleGrant(bad)).toBeUndefined();
  });

  it('allows what the role in the object’s org allows, and nothing in another org', () => {
    expect(canActOn(payments, 'approver', ['payments'])).toEqual({ allowed: true });
    expect(canActOn(payments, 'viewer', ['payments'])).toEqual({ allowed: true });
    expect(canActOn(payments, 'approver', ['web'])).toEqual({ allowed: false, refusal: 'not_found' });
    expect(canActOn(payments, 'auditor', ['web'])).toEqual({ allowed: false, refusal: 'not_found' });
  });

  it('refuses a role too weak in the object’s org as forbidden, naming the org; not found when no org of the object is the person’s', () => {
    expect(canActOn(payments, 'operator', ['payments'])).toEqual({ allowed: false, refusal: 'forbidden', org: 'payments', role: 'approver' });
    expect(canActOn(mixed, 'viewer', ['web'])).toEqual({ allowed: false, refusal: 'forbidden', org: 'web', role: 'auditor' });
  });

  it('lets either party’s org read a handoff between two orgs', () => {
    expect(canActOn(payments, 'viewer', ['web', 'payments'])).toEqual({ allowed: true });
    expect(canActOn(mixed, 'viewer', ['web', 'payments'])).toEqual({ allowed: true });
    expect(canActOn(payments, 'viewer', ['web', 'ops'])).toEqual({ allowed: false, refusal: 'not_found' });
  });

  it('counts a relay-wide role in every org, as the roles before orgs', () => {
    const relayWide: RoleGrant[] = [{ org: null, role: 'viewer' }];
    expect(canActOn(relayWide, 'viewer', ['anything'])).toEqual({ allowed: true });
    expect(canActOn(relayWide, 'approver', ['anything'])).toEqual({ allowed: false, refusal: 'forbidden', org: 'anything', role: 'viewer' });
    expect(roleIn([...relayWide, ...payments], 'payments')).toBe('approver');
    expect(roleIn([...relayWide, ...payments], 'web')).toBe('viewer');
  });

  it('gives a list the orgs where the role is strong enough, or all for a relay-wide role', () => {
    expect(orgsInScope(mixed, 'auditor')).toEqual(['payments', 'web']);
    expect(orgsInScope(mixed, 'viewer')).toEqual(['payments']);
    expect(orgsInScope([{ org: null, role: 'auditor' }, ...mixed], 'auditor')).toBe('all');
    expect(orgsInScope([{ org: null, role: 'auditor' }, ...mixed], 'viewer')).toEqual(['payments']);
  });

  it('keeps one grant per org, the strongest, and drops those a relay-wide role covers', () => {
    expect(
      normalizeGrants([
        { org: 'web', role: 'viewer' },
        { org: 'web', role: 'operator' },
        { org: null, role: 'viewer' },
        { org: 'ops', role: 'auditor' },
      ]),
    ).toEqual([
      { org: null, role: 'viewer' },
      { org: 'web', role: 'operator' },
    ]);
    expect(strongestRole(mixed)).toBe('operator');
    expect(strongestRole([])).toBeUndefined();
  });
});
