import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { adminApi } from '../api/admin-api';
import type { ConsoleRole, RoleGrant, SessionInfo } from '../api/types';
import { orgOfHandle, roleAllows, roleHidesBodies, roleInOrg } from '../lib/roles';

type SessionState = { status: 'checking' } | { status: 'signed_out'; expired: boolean } | { status: 'signed_in'; session: SessionInfo };

interface SessionControls {
  state: SessionState;
  signIn(token: string): Promise<void>;
  signOut(): Promise<void>;
}

const SessionContext = createContext<SessionControls | null>(null);

/** Whether the browser holds a console session; the admin token itself is never kept. */
export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [state, setState] = useState<SessionState>({ status: 'checking' });

  useEffect(() => {
    let active = true;
    adminApi.onUnauthorized(() => {
      queryClient.clear();
      setState({ status: 'signed_out', expired: true });
    });
    adminApi
      .currentSession()
      .then((session) => active && setState(session ? { status: 'signed_in', session } : { status: 'signed_out', expired: false }))
      .catch(() => active && setState({ status: 'signed_out', expired: false }));
    return () => {
      active = false;
      adminApi.onUnauthorized(null);
    };
  }, [queryClient]);

  const signIn = useCallback(async (token: string) => {
    const session = await adminApi.signIn(token);
    setState({ status: 'signed_in', session });
  }, []);

  const signOut = useCallback(async () => {
    try {
      await adminApi.signOut();
    } finally {
      queryClient.clear();
      setState({ status: 'signed_out', expired: false });
    }
  }, [queryClient]);

  const controls = useMemo(() => ({ state, signIn, signOut }), [state, signIn, signOut]);
  return <SessionContext.Provider value={controls}>{children}</SessionContext.Provider>;
}

/** What a signed-in person may do, and where. */
export interface RoleControls {
  /** The strongest role of any grant: what the navigation and relay-wide pages go by. */
  role: ConsoleRole;
  grants: readonly RoleGrant[];
  allows(least: ConsoleRole): boolean;
  /** The role that counts for an agent's objects (its handle's org), and whether it is that org's own; null: none there. */
  roleFor(handle: string): { role: ConsoleRole; scoped: boolean } | null;
  /** The role and org that decide what `recipient`'s rules held (its org's, or relay-wide), as the refusals take them. */
  deciderFor(recipient: string): { role: ConsoleRole | null; org?: string };
  /** Whether the role in `handle`'s org may do what needs `least`: the relay refuses it otherwise. */
  allowsFor(handle: string, least: ConsoleRole): boolean;
  hidesBodies: boolean;
  /** Whether a relay-wide grant (not one per org) may do what needs `least`: what acts on the whole relay, such as creating an org, needs one. */
  relayWideAllows(least: ConsoleRole): boolean;
  /** Whether the person sees more than one org (a relay-wide role, or roles in several), so that filtering by one helps. */
  seesSeveralOrgs: boolean;
}

/** What the signed-in role may do: `allows('operator')`, `allowsFor(handle, 'operator')` in the agent's org, and whether bodies are hidden from it. */
export function useRole(): RoleControls {
  const { state } = useSession();
  const role: ConsoleRole = state.status === 'signed_in' ? state.session.role : 'auditor';
  const grants: readonly RoleGrant[] = state.status === 'signed_in' ? state.session.grants : [];
  const roleFor = (handle: string) => roleInOrg(grants, orgOfHandle(handle));
  return {
    role,
    grants,
    allows: (least) => roleAllows(role, least),
    roleFor,
    deciderFor: (recipient) => {
      const found = roleFor(recipient);
      if (found && !found.scoped) return { role: found.role };
      return { role: found?.role ?? null, org: orgOfHandle(recipient) };
    },
    allowsFor: (handle, least) => {
      const found = roleFor(handle);
      return found !== null && roleAllows(found.role, least);
    },
    hidesBodies: roleHidesBodies(role),
    relayWideAllows: (least) => grants.some((grant) => grant.org === null && roleAllows(grant.role, least)),
    seesSeveralOrgs: grants.some((grant) => grant.org === null) || new Set(grants.map((grant) => grant.org)).size > 1,
  };
}

export function useSession(): SessionControls {
  const controls = useContext(SessionContext);
  if (!controls) throw new Error('useSession outside SessionProvider');
  return controls;
}
