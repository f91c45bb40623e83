/** The person who owns an agent, by their account at the console's OpenID Provider: its issuer and the account's `sub`. */
export interface AgentOwner {
  issuer: string;
  subject: string;
}

/** What four eyes read of the sending agent: its owner's account and its email, with whether the provider verified that email as the owner's. */
export interface OwnedAgent {
  owner: AgentOwner | null;
  email: string | null;
  email_verified: boolean;
}

/** The approver as four eyes see them: who signed in to the console (null for the admin token). */
export interface FourEyesPerson {
  issuer: string;
  sub: string;
  email: string | null;
  email_verified: boolean;
}

/**
 * Why four eyes refuse a decision:
 * - `admin_token`: no person signed in (the admin token names nobody);
 * - `no_owner`: the sending agent has no owner on record (neither an account nor a verified email),
 *   so nobody can be shown not to be its owner;
 * - `owner`: the approver is the owner, by their account, or by their verified email being the agent's;
 * - `unverifiable`: the owner is on record only by a verified email (or by an account of another
 *   provider) and the approver's sign-in has no verified email to tell them apart.
 */
export type FourEyesRefusalKind = 'admin_token' | 'no_owner' | 'owner' | 'unverifiable';

/** Issuers compared as the same provider whatever their trailing slash. */
function sameIssuer(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

function sameEmail(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/**
 * Four eyes on a stable identity: the person deciding must be shown not to own the sending agent,
 * by the provider's account (issuer and `sub`) or by an email the provider verified. An unverified
 * email of the approver proves nothing either way: it neither makes them the owner nor shows they
 * are not; an agent's email nobody verified as the owner's is no owner on record, though an approver
 * whose verified email it is, is its owner.
 * Null when the person may decide.
 */
export function fourEyesRefusal(agent: OwnedAgent, person: FourEyesPerson | null): FourEyesRefusalKind | null {
  if (!person) return 'admin_token';
  const ownerEmail = agent.email_verified ? agent.email : null;
  if (!agent.owner && !ownerEmail) return 'no_owner';
  if (agent.owner && sameIssuer(agent.owner.issuer, person.issuer) && agent.owner.subject === person.sub) return 'owner';
  const personEmail = person.email_verified ? person.email : null;
  // The approver proved they hold the address on record as the owner's, verified as theirs or not.
  if (agent.email && personEmail && sameEmail(agent.email, personEmail)) return 'owner';
  // Another account of the owner's provider is another person; anything else must differ by a verified email.
  if (agent.owner && sameIssuer(agent.owner.issuer, person.issuer)) return null;
  return ownerEmail && personEmail ? null : 'unverifiable';
}
