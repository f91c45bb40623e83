import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../api/api-error';
import type { OrgRecord } from '../api/types';
import { orgChanges, orgErrorField, orgFormValues, quotaText } from './org-form';

const org: OrgRecord = {
  name: 'payments',
  display_name: 'Payments',
  defaults: { trust: null },
  quotas: { agents: 50, requests_per_minute: null, open_handoffs: 0, stored_bytes: null, upstream_in_flight: null },
  chain: {},
  origin: 'admin',
  tenant: null,
  agents: 3,
  created_at: '2026-01-02T03:04:05.000Z',
  updated_at: '2026-01-02T03:04:05.000Z',
};

describe('the org forms', () => {
  it('sends an emptied display name or quota as null, and a quota as the number typed', () => {
    expect(
      orgChanges({ display_name: '  ', agents: '12', requests_per_minute: '', open_handoffs: '-1', stored_bytes: '1048576', upstream_in_flight: '' }),
    ).toEqual({
      display_name: null,
      quotas: { agents: 12, requests_per_minute: null, open_handoffs: -1, stored_bytes: 1048576, upstream_in_flight: null },
    });
  });

  it('starts from the org as it is, and gives back the same body', () => {
    const values = orgFormValues(org);
    expect(values).toEqual({ display_name: 'Payments', agents: '50', requests_per_minute: '', open_handoffs: '0', stored_bytes: '', upstream_in_flight: '' });
    expect(orgChanges(values)).toEqual({ display_name: 'Payments', quotas: org.quotas });
  });

  it('says a quota in words', () => {
    expect(quotaText(null)).toBe('no limit');
    expect(quotaText(6000)).toBe('6,000');
  });

  it('finds the field an error is about', () => {
    const invalid = (field: string) => new ApiError(400, 'invalid_params', `${field}: bad`, { field }, [{ field, messages: ['must not be less than 0'] }]);
    expect(orgErrorField(invalid('quotas.agents'))).toBe('agents');
    expect(orgErrorField(invalid('display_name'))).toBe('display_name');
    expect(orgErrorField(invalid('chain.max_depth'))).toBeNull();
    expect(orgErrorField(new ApiError(409, 'org_exists', 'The org payments already exists', { org: 'payments' }))).toBe('name');
    expect(orgErrorField(new Error('offline'))).toBeNull();
  });
});
