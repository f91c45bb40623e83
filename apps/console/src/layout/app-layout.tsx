import { useState } from 'react';
import { NavLink, Outlet } from 'react-router';
import type { ConsoleRole } from '../api/types';
import { useRole, useSession } from '../session/session-context';

const SECTIONS: Array<{ to: string; label: string; least: ConsoleRole }> = [
  { to: '/handoffs', label: 'Live handoffs', least: 'auditor' },
  // Search matches message text, which an auditor may not read.
  { to: '/search', label: 'Search', least: 'viewer' },
  { to: '/agents', label: 'Agents', least: 'auditor' },
  { to: '/deliveries', label: 'Deliveries', least: 'auditor' },
  { to: '/overview', label: 'Overview', least: 'auditor' },
];

/** Who is signed in, and as what. */
function SignedInAs() {
  const { state } = useSession();
  if (state.status !== 'signed_in') return null;
  const { person, role } = state.session;
  const who = person ? (person.name ?? person.email ?? person.sub) : 'Admin token';
  return (
    <p className="signed-in-as" data-testid="signed-in-as">
      {who}
      {person?.email && person.name ? ` (${person.email})` : null} · <span data-testid="signed-in-role">{role}</span>
    </p>
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

/** The frame of every signed-in page: the banner with the navigation, and the page in `<main>`. */
export function AppLayout() {
  const { allows } = useRole();
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
