import { useInfiniteQuery } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { adminApi } from '../../api/admin-api';
import { ErrorMessage } from '../../components/error-message';
import { OrgFilterField } from '../../components/org-filter-field';
import { TimeStamp } from '../../components/time-stamp';
import { useDocumentTitle } from '../../lib/use-document-title';
import { useRole } from '../../session/session-context';
import { ConnectUpstreamForm } from './connect-upstream-form';
import { RegisterAgentForm } from './register-agent-form';
import { UpstreamBadge } from './upstream-badge';

/** The agents list's filter: one org of the several the person sees. */
function AgentFilters({ org, onApply }: { org: string; onApply: (org: string) => void }) {
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    onApply(
      String(new FormData(event.currentTarget).get('org') ?? '')
        .trim()
        .toLowerCase(),
    );
  };
  return (
    <form className="filters" role="search" aria-label="Filter agents" onSubmit={submit} key={org}>
      <OrgFilterField value={org} />
      <div className="actions">
        <button type="submit" className="button">
          Apply filter
        </button>
        {org && (
          <button type="button" className="button secondary" onClick={() => onApply('')}>
            All orgs
          </button>
        )}
      </div>
    </form>
  );
}

/** Every agent (disabled ones too), and the forms that register a new one and connect one that runs its own A2A server. */
export function AgentsPage() {
  useDocumentTitle('Agents');
  const { allows, seesSeveralOrgs } = useRole();
  const [searchParams, setSearchParams] = useSearchParams();
  const org = searchParams.get('org')?.trim().toLowerCase() ?? '';
  const agents = useInfiniteQuery({
    queryKey: ['agents', org],
    queryFn: ({ pageParam }) => adminApi.listAgents(pageParam || undefined, org || undefined),
    initialPageParam: '',
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const rows = agents.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <>
      <h1>Agents</h1>
      {allows('admin') && <RegisterAgentForm />}
      {allows('admin') && <ConnectUpstreamForm />}
      {seesSeveralOrgs && <AgentFilters org={org} onApply={(next) => setSearchParams(next ? { org: next } : {})} />}
      {agents.isPending && <p role="status">Loading agents…</p>}
      {agents.isError && <ErrorMessage error={agents.error} />}
      {agents.isSuccess && (
        <table className="table">
          <caption>{org ? `Registered agents of ${org}` : 'Registered agents'}</caption>
          <thead>
            <tr>
              <th scope="col">Handle</th>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Runs on</th>
              <th scope="col">Status</th>
              <th scope="col">Registered</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((agent) => (
              <tr key={agent.id}>
                <td>
                  <Link to={`/agents/${encodeURIComponent(agent.handle)}`}>{agent.handle}</Link>
                </td>
                <td>{agent.name}</td>
                <td>{agent.role ?? '—'}</td>
                <td>{agent.upstream ? <UpstreamBadge agent={agent} /> : 'Relay inbox'}</td>
                <td>{agent.disabled ? 'Disabled' : 'Active'}</td>
                <td>
                  <TimeStamp at={agent.created_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {agents.hasNextPage && (
        <button type="button" className="button secondary" onClick={() => void agents.fetchNextPage()}>
          More agents
        </button>
      )}
    </>
  );
}
