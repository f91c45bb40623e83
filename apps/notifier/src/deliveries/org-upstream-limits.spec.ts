import { OrgUpstreamLimits } from './org-upstream-limits';

function upstream(id: string, handle: string): { id: string; channel: string; target_handle: string } {
  return { id, channel: 'upstream', target_handle: handle };
}

describe('OrgUpstreamLimits', () => {
  const quotas: Record<string, number | null> = { payments: 2, web: null };
  const lookups: string[] = [];
  const lookup = (org: string): Promise<number | null> => {
    lookups.push(org);
    return org === 'down' ? Promise.reject(new Error('no answer')) : Promise.resolve(quotas[org] ?? null);
  };

  beforeEach(() => {
    lookups.length = 0;
  });

  it('gives each org with a quota the slots it has left, and none to an org without one', async () => {
    const limits = new OrgUpstreamLimits(lookup, () => undefined);
    await limits.learn(['payments', 'web', 'payments']);
    expect(lookups).toEqual(['payments', 'web']);
    expect(limits.slots(new Map([['payments', 1]]))).toEqual({ payments: 1 });
    expect(limits.slots(new Map([['payments', 5]]))).toEqual({ payments: 0 });
  });

  it('names the claimed upstream deliveries beyond their org’s quota, in the order claimed, and never another channel’s or another org’s', async () => {
    const limits = new OrgUpstreamLimits(lookup, () => undefined);
    await limits.learn(['payments', 'web']);
    const claimed = [
      upstream('1', 'a@payments'),
      upstream('2', 'b@payments'),
      { id: '3', channel: 'webhook', target_handle: 'c@payments' },
      upstream('4', 'a@web'),
      upstream('5', 'c@payments'),
    ];
    expect(limits.beyondLimits(claimed, new Map())).toEqual(['5']);
    expect(limits.beyondLimits(claimed, new Map([['payments', 1]]))).toEqual(['2', '5']);
    expect(limits.beyondLimits([upstream('6', 'x@unknown')], new Map([['unknown', 100]]))).toEqual([]);
  });

  it('reads a quota again after the cache time, using the last one meanwhile', async () => {
    let now = 0;
    const limits = new OrgUpstreamLimits(
      lookup,
      () => undefined,
      1000,
      () => now,
    );
    await limits.learn(['payments']);
    quotas.payments = 5;
    now = 500;
    expect(limits.limitOf('payments')).toBe(2);
    now = 1500;
    expect(limits.limitOf('payments')).toBe(2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(limits.limitOf('payments')).toBe(5);
    quotas.payments = 2;
  });

  it('holds nothing back for an org whose quota the directory does not answer', async () => {
    const failures: string[] = [];
    const limits = new OrgUpstreamLimits(lookup, (org) => failures.push(org));
    await limits.learn(['down']);
    expect(failures).toEqual(['down']);
    expect(limits.beyondLimits([upstream('1', 'a@down'), upstream('2', 'b@down')], new Map())).toEqual([]);
  });
});
