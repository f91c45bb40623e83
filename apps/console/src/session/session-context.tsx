import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { adminApi } from '../api/admin-api';
import type { ConsoleRole, SessionInfo } from '../api/types';
import { roleAllows, roleHidesBodies } from '../lib/roles';

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

/** What the signed-in role may do: `allows('operator')`, and whether bodies are hidden from it. */
export function useRole(): { role: ConsoleRole; allows(least: ConsoleRole): boolean; hidesBodies: boolean } {
  const { state } = useSession();
  const role: ConsoleRole = state.status === 'signed_in' ? state.session.role : 'auditor';
  return { role, allows: (least) => roleAllows(role, least), hidesBodies: roleHidesBodies(role) };
}

export function useSession(): SessionControls {
  const controls = useContext(SessionContext);
  if (!controls) throw new Error('useSession outside SessionProvider');
  return controls;
}
