import { useQuery } from '@tanstack/react-query';
import { adminApi } from '../../api/admin-api';
import { TASK_STATES } from '../../api/types';
import { ErrorMessage } from '../../components/error-message';
import { stateLabel } from '../../components/state-badge';

/** How many of the agent's received and sent handoffs are in each state. */
export function AgentCounts({ handle }: { handle: string }) {
  const counts = useQuery({ queryKey: ['agent', handle, 'counts'], queryFn: () => adminApi.agentCounts(handle) });
  return (
    <section className="card" aria-labelledby="counts-title">
      <h2 id="counts-title">Handoffs by state</h2>
      {counts.isPending && <p role="status">Loading counts…</p>}
      {counts.isError && <ErrorMessage error={counts.error} />}
      {counts.isSuccess && (
        <table className="table compact">
          <caption>Inbox and sent handoffs of {handle}</caption>
          <thead>
            <tr>
              <th scope="col">State</th>
              <th scope="col">Inbox</th>
              <th scope="col">Sent</th>
            </tr>
          </thead>
          <tbody>
            {TASK_STATES.map((state) => (
              <tr key={state}>
                <th scope="row">{stateLabel(state)}</th>
                <td>{counts.data.inbox[state] ?? 0}</td>
                <td>{counts.data.sent[state] ?? 0}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
