import { useInfiniteQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { adminApi } from '../../api/admin-api';
import { ErrorMessage } from '../../components/error-message';
import { TimeStamp } from '../../components/time-stamp';
import { useDocumentTitle } from '../../lib/use-document-title';
import { useRole } from '../../session/session-context';
import { ConnectUpstreamForm } from './connect-upstream-form';
import { RegisterAgentForm } from './register-agent-form';
import { UpstreamBadge } from './upstream-badge';

/** Every agent (disabled ones too), and the forms that register a new one and connect one that runs its own A2A server. */
export function AgentsPage() {
  useDocumentTitle('Agents');
  const { allows } = useRole();
  const agents = useInfiniteQuery({
    queryKey: ['agents'],
    queryFn: ({ pageParam }) => adminApi.listAgents(pageParam || undefined),
    initialPageParam: '',
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const rows = agents.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <>
      <h1>Agents</h1>
      {allows('admin') && <RegisterAgentForm />}
      {allows('admin') && <ConnectUpstreamForm />}
      {agents.isPending && <p role="status">Loading agents…</p>}
      {agents.isError && <ErrorMessage error={agents.error} />}
      {agents.isSuccess && (
        <table className="table">
          <caption>Registered agents</caption>
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
