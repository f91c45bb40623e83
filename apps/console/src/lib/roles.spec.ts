import { describe, expect, it } from '@jest/globals';
import { roleAllows, roleHidesBodies } from './roles';

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
