import { fourEyesRefusal, type FourEyesPerson, type OwnedAgent } from './agent-owner';

const ISSUER = 'https://idp.acme.test';
const owen: FourEyesPerson = { issuer: ISSUER, sub: 'owen', email: null, email_verified: false };
const ann: FourEyesPerson = { issuer: ISSUER, sub: 'ann', email: 'ann@acme.test', email_verified: true };

function agent(fields: Partial<OwnedAgent>): OwnedAgent {
  return { owner: null, email: null, email_verified: false, ...fields };
}

describe('fourEyesRefusal', () => {
  it('refuses the admin token, and everyone when the agent has no owner on record', () => {
    expect(fourEyesRefusal(agent({ owner: { issuer: ISSUER, subject: 'owen' } }), null)).toBe('admin_token');
    expect(fourEyesRefusal(agent({}), ann)).toBe('no_owner');
    // An email nobody verified as the owner's is no owner on record.
    expect(fourEyesRefusal(agent({ email: 'owen@partner.test' }), ann)).toBe('no_owner');
    expect(fourEyesRefusal(agent({ email: 'owen@partner.test' }), { ...owen, email: 'owen@partner.test' })).toBe('no_owner');
  });

  it('refuses the owner by their account, with or without an email, whatever the issuer’s trailing slash', () => {
    const owned = agent({ owner: { issuer: `${ISSUER}/`, subject: 'owen' } });
    expect(fourEyesRefusal(owned, owen)).toBe('owner');
    expect(fourEyesRefusal(owned, { ...owen, email: 'someone-else@acme.test', email_verified: true })).toBe('owner');
    expect(fourEyesRefusal(owned, ann)).toBeNull();
  });

  it('refuses another account with the owner’s verified email; an unverified email counts for nothing', () => {
    const owned = agent({ owner: { issuer: ISSUER, subject: 'owen' }, email: 'Owen@Partner.test', email_verified: true });
    expect(fourEyesRefusal(owned, { issuer: ISSUER, sub: 'owen-2', email: 'owen@partner.test', email_verified: true })).toBe('owner');
    expect(fourEyesRefusal(owned, { issuer: ISSUER, sub: 'ursula', email: 'owen@partner.test', email_verified: false })).toBeNull();
    // The agent's email, unverified as the owner's, is still the owner's when the approver proves it is theirs.
    const typed = agent({ owner: { issuer: ISSUER, subject: 'owen' }, email: 'owen@partner.test' });
    expect(fourEyesRefusal(typed, { issuer: ISSUER, sub: 'owen-2', email: 'owen@partner.test', email_verified: true })).toBe('owner');
    expect(fourEyesRefusal(typed, { issuer: ISSUER, sub: 'ursula', email: 'owen@partner.test', email_verified: false })).toBeNull();
  });

  it('needs a verified email to tell the approver from an owner known only by a verified email or another provider’s account', () => {
    const byEmail = agent({ email: 'owen@partner.test', email_verified: true });
    expect(fourEyesRefusal(byEmail, ann)).toBeNull();
    expect(fourEyesRefusal(byEmail, { ...ann, email_verified: false })).toBe('unverifiable');
    expect(fourEyesRefusal(byEmail, { ...ann, email: null })).toBe('unverifiable');
    expect(fourEyesRefusal(byEmail, { ...ann, email: 'OWEN@partner.test' })).toBe('owner');
    const elsewhere = agent({ owner: { issuer: 'https://old-idp.acme.test', subject: 'owen' } });
    expect(fourEyesRefusal(elsewhere, ann)).toBe('unverifiable');
  });
});
