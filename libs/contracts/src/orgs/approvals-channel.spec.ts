import { approvalsSlackRouteOf, holdingOrgOf } from './approvals-channel';

describe('the approvers’ Slack route of a held handoff (approvalsSlackRouteOf)', () => {
  it('names the recipient’s org as the one whose rule held the handoff', () => {
    expect(holdingOrgOf('ana@payments')).toBe('payments');
    expect(holdingOrgOf('frank@web.eu')).toBe('web.eu');
  });

  it('goes to the holding org’s channel when it has one, and then never to the relay’s', () => {
    for (const relayHasChannel of [true, false]) {
      for (const orgOnly of [true, false]) {
        expect(approvalsSlackRouteOf('ana@payments', { orgHasChannel: true, relayHasChannel, orgOnly })).toEqual({ to: 'org', org: 'payments' });
      }
    }
  });

  it('goes to the relay’s channel for an org without one, unless the relay keeps to org channels', () => {
    expect(approvalsSlackRouteOf('frank@web', { orgHasChannel: false, relayHasChannel: true, orgOnly: false })).toEqual({ to: 'relay' });
    expect(approvalsSlackRouteOf('frank@web', { orgHasChannel: false, relayHasChannel: true, orgOnly: true })).toEqual({ to: 'none' });
  });

  it('goes nowhere when neither the org nor the relay has a channel', () => {
    expect(approvalsSlackRouteOf('frank@web', { orgHasChannel: false, relayHasChannel: false, orgOnly: false })).toEqual({ to: 'none' });
    expect(approvalsSlackRouteOf('frank@web', { orgHasChannel: false, relayHasChannel: false, orgOnly: true })).toEqual({ to: 'none' });
  });
});
