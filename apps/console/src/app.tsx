import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { ApiError } from './api/api-error';
import { AppLayout } from './layout/app-layout';
import { AgentPage } from './pages/agents/agent-page';
import { AgentsPage } from './pages/agents/agents-page';
import { ApprovalsPage } from './pages/approvals/approvals-page';
import { HeldHandoffPage } from './pages/approvals/held-handoff-page';
import { DeliveriesPage } from './pages/deliveries/deliveries-page';
import { HandoffPage } from './pages/handoff/handoff-page';
import { LivePage } from './pages/live/live-page';
import { OrgPage } from './pages/orgs/org-page';
import { OrgsPage } from './pages/orgs/orgs-page';
import { OverviewPage } from './pages/overview/overview-page';
import { SearchPage } from './pages/search/search-page';
import { SignInPage } from './pages/sign-in/sign-in-page';
import { SessionProvider, useSession } from './session/session-context';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 5_000,
      // A client error (4xx) will not change by asking again.
      retry: (failures, error) => !(error instanceof ApiError && error.status < 500) && failures < 2,
    },
  },
});

function SignedInRoutes() {
  return (
    <Routes>
      <Route element={<AppLayout />}>
        <Route index element={<Navigate to="/handoffs" replace />} />
        <Route path="handoffs" element={<LivePage />} />
        <Route path="handoffs/:id" element={<HandoffPage />} />
        <Route path="search" element={<SearchPage />} />
        <Route path="agents" element={<AgentsPage />} />
        <Route path="agents/:handle" element={<AgentPage />} />
        <Route path="approvals" element={<ApprovalsPage />} />
        <Route path="approvals/:id" element={<HeldHandoffPage />} />
        <Route path="deliveries" element={<DeliveriesPage />} />
        <Route path="orgs" element={<OrgsPage />} />
        <Route path="orgs/:name" element={<OrgPage />} />
        <Route path="overview" element={<OverviewPage />} />
        <Route path="*" element={<Navigate to="/handoffs" replace />} />
      </Route>
    </Routes>
  );
}

function SessionGate() {
  const { state } = useSession();
  if (state.status === 'checking') {
    return (
      <main className="centered">
        <p role="status">Checking your session…</p>
      </main>
    );
  }
  if (state.status === 'signed_out') return <SignInPage expired={state.expired} />;
  return <SignedInRoutes />;
}

export function App() {
  return (
    <QueryClientProvider client={queryClient}>
      <BrowserRouter basename="/console">
        <SessionProvider>
          <SessionGate />
        </SessionProvider>
      </BrowserRouter>
    </QueryClientProvider>
  );
}
