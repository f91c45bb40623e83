import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { adminApi } from '../../api/admin-api';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorMessage } from '../../components/error-message';
import { orgOfHandle } from '../../lib/roles';
import { useDocumentTitle } from '../../lib/use-document-title';
import { useRole } from '../../session/session-context';
import { AgentCardForm } from './agent-card-form';
import { AgentCounts } from './agent-counts';
import { AgentKeys } from './agent-keys';
import { TrustPolicyEditor } from './trust-policy-editor';
import { UpstreamSection } from './upstream-section';

function DisableAgentButton({ handle }: { handle: string }) {
  const queryClient = useQueryClient();
  const [asking, setAsking] = useState(false);
  const disable = useMutation({
    mutationFn: () => adminApi.disableAgent(handle),
    onSuccess: (updated) => {
      queryClient.setQueryData(['agent', handle], updated);
      void queryClient.invalidateQueries({ queryKey: ['agents'] });
    },
    onSettled: () => setAsking(false),
  });
  return (
    <>
      <button type="button" className="button danger" onClick={() => setAsking(true)}>
        Disable {handle}
      </button>
      {disable.isError && <ErrorMessage error={disable.error} />}
      <ConfirmDialog
        open={asking}
        title={`Disable ${handle}?`}
        confirmLabel="Disable agent"
        onCancel={() => setAsking(false)}
        onConfirm={() => disable.mutate()}
      >
        Its keys stop working at once; its handoffs stay readable to the other party.
      </ConfirmDialog>
    </>
  );
}

/** One agent: its card, keys, trust policy and handoff counts. */
export function AgentPage() {
  const { handle = '' } = useParams();
  useDocumentTitle(`Agent ${handle}`);
  const agent = useQuery({ queryKey: ['agent', handle], queryFn: () => adminApi.getAgent(handle) });
  const { allowsFor } = useRole();
  if (agent.isPending) return <p role="status">Loading the agent…</p>;
  if (agent.isError) {
    return (
      <>
        <h1>Agent {handle}</h1>
        <ErrorMessage error={agent.error} />
        <Link to="/agents">All agents</Link>
      </>
    );
  }
  const record = agent.data;
  return (
    <>
      <h1>
        {record.name} <span className="handle">({record.handle})</span>
      </h1>
      <p>
        {record.disabled ? <strong>Disabled.</strong> : 'Active.'} Org{' '}
        <Link to={`/orgs/${encodeURIComponent(orgOfHandle(record.handle))}`}>{orgOfHandle(record.handle)}</Link>.{' '}
        <Link to={`/handoffs?agent=${encodeURIComponent(record.handle)}`}>Its handoffs</Link>
      </p>
      {!record.disabled && allowsFor(record.handle, 'operator') && <DisableAgentButton handle={record.handle} />}
      <div className="columns">
        <AgentCardForm agent={record} />
        <AgentCounts handle={record.handle} />
      </div>
      {record.upstream && <UpstreamSection handle={record.handle} />}
      <AgentKeys agent={record} />
      <TrustPolicyEditor agent={record} />
    </>
  );
}
