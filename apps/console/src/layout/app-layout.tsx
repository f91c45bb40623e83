import { useState } from 'react';
import { NavLink, Outlet } from 'react-router';
import type { ConsoleRole, RoleGrant } from '../api/types';
import { describeGrant } from '../lib/roles';
import { useHeldCount } from '../pages/approvals/use-held-count';
import { useRole, useSession } from '../session/session-context';

const SECTIONS: Array<{ to: string; label: string; least: ConsoleRole }> = [
  { to: '/handoffs', label: 'Live handoffs', least: 'auditor' },
  // Search matches message text, which an auditor may not read.
  { to: '/search', label: 'Search', least: 'viewer' },
  { to: '/agents', label: 'Agents', least: 'auditor' },
  // Held handoffs are read with their content, which an auditor may not read.
  { to: '/approvals', label: 'Approvals', least: 'viewer' },
  { to: '/deliveries', label: 'Deliveries', least: 'auditor' },
  { to: '/orgs', label: 'Orgs', least: 'auditor' },
  { to: '/overview', label: 'Overview', least: 'auditor' },
];

/** The person's roles: the relay-wide one as a word, as before orgs; one per org otherwise (`payments: approver`). */
function SignedInRoles({ grants }: { grants: readonly RoleGrant[] }) {
  const only = grants.length === 1 ? grants[0] : undefined;
  if (only?.org === null) return <span data-testid="signed-in-role">{only.role}</span>;
  return (
    <ul className="signed-in-roles" aria-label="Your roles" data-testid="signed-in-roles">
      {grants.map((grant) => (
        <li key={grant.org ?? ''}>{describeGrant(grant)}</li>
      ))}
    </ul>
  );
}

/** Who is signed in, and as what (in which orgs). */
function SignedInAs() {
  const { state } = useSession();
  if (state.status !== 'signed_in') return null;
  const { person, grants } = state.session;
  const who = person ? (person.name ?? person.email ?? person.sub) : 'Admin token';
  return (
    <div className="signed-in-as" data-testid="signed-in-as">
      {who}
      {person?.email && person.name ? ` (${person.email})` : null} · <SignedInRoles grants={grants} />
    </div>
  );
}

function SignOutButton() {
  const { signOut } = useSession();
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      className="button secondary"
      disabled={busy}
      onClick={() => {
        setBusy(true);
        void signOut().finally(() => setBusy(false));
      }}
    >
      Sign out
    </button>
  );
}

/** The approvals entry's count of held handoffs, said in words to a screen reader. */
function HeldCount({ held }: { held: { count: number; more: boolean } | null }) {
  if (!held || held.count === 0) return null;
  const shown = `${held.count}${held.more ? '+' : ''}`;
  return (
    <span className="nav-count" data-testid="held-count">
      <span aria-hidden="true">{shown}</span>
      <span className="visually-hidden">{`, ${shown} held`}</span>
    </span>
  );
}

/** The frame of every signed-in page: the banner with the navigation, and the page in `<main>`. */
export function AppLayout() {
  const { allows } = useRole();
  const held = useHeldCount(allows('viewer'));
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="banner">
        <p className="brand">AgentRelay console</p>
        <nav aria-label="Sections">
          <ul className="nav-list">
            {SECTIONS.filter((section) => allows(section.least)).map((section) => (
              <li key={section.to}>
                <NavLink to={section.to} className="nav-link">
                  {section.label}
                  {section.to === '/approvals' && <HeldCount held={held} />}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <SignedInAs />
        <SignOutButton />
      </header>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </>
  );
}
