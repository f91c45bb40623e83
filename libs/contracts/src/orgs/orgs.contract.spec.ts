import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { OrgFields, tenantProblem } from './orgs.contract';

function problems(body: Record<string, unknown>): string[] {
  return validateSync(plainToInstance(OrgFields, body)).flatMap((error) => Object.values(error.constraints ?? {}));
}

describe("an org's A2A tenant", () => {
  it.each([['payments'], ['acme.payments'], ['team_7'], ['a'], ['x'.repeat(63)]])('may be %s', (tenant) => {
    expect(tenantProblem(tenant)).toBeNull();
    expect(problems({ tenant })).toEqual([]);
  });

  it.each([[''], ['Payments'], ['-pay'], ['pay/ments'], ['pay ments'], ['x'.repeat(64)]])('may not be %j', (tenant) => {
    expect(tenantProblem(tenant)).toMatch(/^tenant must be/);
    expect(problems({ tenant })).toHaveLength(1);
  });

  it.each([['tasks'], ['v1']])("may not be %s, which an agent endpoint's own paths begin with", (tenant) => {
    expect(tenantProblem(tenant)).toContain(`tenant cannot be "${tenant}"`);
    expect(problems({ tenant })).toEqual([tenantProblem(tenant)]);
  });

  it('is removed with null, and must otherwise be a string', () => {
    expect(problems({ tenant: null })).toEqual([]);
    expect(problems({ tenant: 7 })).toEqual(['tenant must be a string, or null for none']);
  });
});
