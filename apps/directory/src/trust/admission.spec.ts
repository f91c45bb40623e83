import { decideAdmission } from './admission';

describe('decideAdmission', () => {
  it('admits teammates by default and refuses other orgs', () => {
    expect(decideAdmission('bob@acme', 'frank@acme', null)).toEqual({ admitted: true });
    expect(decideAdmission('eve@evil', 'frank@acme', null)).toEqual({ admitted: false, policy: 'not_allowed' });
  });

  it('admits another org when allow names the handle or the org', () => {
    expect(decideAdmission('carol@partner', 'frank@acme', { allow: ['carol@partner'], block: [] })).toEqual({ admitted: true });
    expect(decideAdmission('dave@partner', 'frank@acme', { allow: ['*@partner'], block: [] })).toEqual({ admitted: true });
    expect(decideAdmission('dave@partner', 'frank@acme', { allow: ['carol@partner'], block: [] })).toEqual({ admitted: false, policy: 'not_allowed' });
    expect(decideAdmission('dave@partner.io', 'frank@acme', { allow: ['*@partner'], block: [] })).toEqual({ admitted: false, policy: 'not_allowed' });
  });

  it('lets block win over teammates and over allow', () => {
    expect(decideAdmission('bob@acme', 'frank@acme', { allow: [], block: ['bob@acme'] })).toEqual({ admitted: false, policy: 'blocked' });
    expect(decideAdmission('bob@acme', 'frank@acme', { allow: ['bob@acme'], block: ['*@acme'] })).toEqual({ admitted: false, policy: 'blocked' });
    expect(decideAdmission('carol@partner', 'frank@acme', { allow: ['*@partner'], block: ['carol@partner'] })).toEqual({ admitted: false, policy: 'blocked' });
  });
});
