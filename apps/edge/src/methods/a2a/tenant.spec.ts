import { RelayError } from '@app/contracts';
import { requestedTenant, tenantRefusal } from './tenant';

function refusalOf(run: () => unknown): RelayError {
  try {
    run();
  } catch (error) {
    if (error instanceof RelayError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('the tenant a request names', () => {
  it.each([[{}], [{ tenant: '' }], [{ tenant: null }]])('names none in %j, as a client of an interface without a tenant sends', (params) => {
    expect(requestedTenant(params)).toBeUndefined();
  });

  it('names the tenant of its params', () => {
    expect(requestedTenant({ tenant: 'payments', id: 'T1' })).toBe('payments');
  });

  it.each([[42], [['payments']], [{ name: 'payments' }]])('refuses a tenant %j that is not a string, naming the field', (tenant) => {
    const error = refusalOf(() => requestedTenant({ tenant }));
    expect(error.reason).toBe('invalid_params');
    expect(error.data).toEqual({ field: 'tenant' });
  });

  it.each([['Payments'], ['-payments'], ['pay/ments'], ['x'.repeat(64)]])('refuses %s, which no org can have, without repeating it', (tenant) => {
    const error = refusalOf(() => requestedTenant({ tenant }));
    expect(error.reason).toBe('invalid_params');
    expect(error.message).not.toContain(tenant);
  });
});

describe('whether a tenant reaches the agent of its endpoint', () => {
  it("lets a request through when the agent's org has that tenant", () => {
    expect(tenantRefusal('ana@payments', 'pay', 'pay')).toBeNull();
  });

  it('answers another tenant, an org without one and a missing agent alike: agent not found, naming what the request named', () => {
    const otherOrg = tenantRefusal('ana@payments', 'web', 'pay');
    const noTenant = tenantRefusal('ana@payments', 'web', null);
    expect(otherOrg).toEqual(noTenant);
    expect(otherOrg?.reason).toBe('agent_not_found');
    expect(otherOrg?.message).toBe('No agent ana@payments at the tenant web');
    expect(otherOrg?.data).toEqual({ handle: 'ana@payments', tenant: 'web' });
    expect(otherOrg?.message).not.toContain('pay ');
  });

  it('refuses a tenant on the relay endpoint, which is no agent of an org', () => {
    const error = tenantRefusal(null, 'pay', null);
    expect(error?.reason).toBe('invalid_params');
    expect(error?.data).toEqual({ field: 'tenant' });
  });
});
