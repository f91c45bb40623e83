import { useState } from 'react';
import { NavLink, Outlet } from 'react-router';
import { useSession } from '../session/session-context';

const SECTIONS = [
  { to: '/handoffs', label: 'Live handoffs' },
  { to: '/search', label: 'Search' },
  { to: '/agents', label: 'Agents' },
  { to: '/deliveries', label: 'Deliveries' },
  { to: '/overview', label: 'Overview' },
];

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
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="banner">
        <p className="brand">AgentRelay console</p>
        <nav aria-label="Sections">
          <ul className="nav-list">
            {SECTIONS.map((section) => (
              <li key={section.to}>
                <NavLink to={section.to} className="nav-link">
                  {section.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <SignOutButton />
      </header>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </>
  );
}
