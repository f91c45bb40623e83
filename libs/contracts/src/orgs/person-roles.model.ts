import type { AdminRole } from './org-scope';

/** A person given a role in one org through the admin API. */
export interface OrgPerson {
  subject: string;
  role: AdminRole;
  updated_at: string;
}

/** The people given a role in an org through the admin API (a relay-wide role, or one from claims, is not listed). */
export interface OrgPeoplePage {
  org: string;
  /** The console's OpenID Provider, where these people sign in; null when the console has none (then no one is listed). */
  issuer: string | null;
  items: OrgPerson[];
  next_cursor: string | null;
}
