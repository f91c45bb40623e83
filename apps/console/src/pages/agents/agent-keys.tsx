import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { adminApi } from '../../api/admin-api';
import type { AgentRecord, CreatedKey } from '../../api/types';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorMessage } from '../../components/error-message';
import { ShownOnceSecret } from '../../components/shown-once-secret';
import { TimeStamp } from '../../components/time-stamp';
import { useRole } from '../../session/session-context';

type KeyChange = { kind: 'rotate' | 'revoke'; prefix: string };

/** The agent's API keys by prefix: make a new one, rotate one (new key, then the old revoked), revoke one. */
export function AgentKeys({ agent }: { agent: AgentRecord }) {
  const queryClient = useQueryClient();
  const mayChange = useRole().allowsFor(agent.handle, 'admin') && !agent.disabled;
  const queryKey = ['agent', agent.handle, 'keys'];
  const keys = useQuery({ queryKey, queryFn: () => adminApi.listKeys(agent.handle) });
  const [newKey, setNewKey] = useState<CreatedKey | null>(null);
  const [pending, setPending] = useState<KeyChange | null>(null);
  const change = useMutation({
    mutationFn: async (request: KeyChange | { kind: 'create' }) => {
      if (request.kind === 'create') return adminApi.createKey(agent.handle);
      if (request.kind === 'rotate') return adminApi.rotateKey(agent.handle, request.prefix);
      await adminApi.revokeKey(agent.handle, request.prefix);
      return null;
    },
    onSuccess: (created) => {
      setNewKey(created);
      void queryClient.invalidateQueries({ queryKey });
    },
    onSettled: () => setPending(null),
  });

  return (
    <section className="card" aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      {newKey && (
        <div className="notice">
          <p>New key {newKey.key.prefix}: copy it now, it is shown only once.</p>
          <ShownOnceSecret label="New API key" value={newKey.api_key} />
        </div>
      )}
      {keys.isError && <ErrorMessage error={keys.error} />}
      {change.isError && <ErrorMessage error={change.error} />}
      {keys.isSuccess && (
        <table className="table">
          <caption>Keys of {agent.handle}</caption>
          <thead>
            <tr>
              <th scope="col">Prefix</th>
              <th scope="col">Created</th>
              <th scope="col">Status</th>
              {mayChange && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {keys.data.map((key) => (
              <tr key={key.prefix}>
                <td>
                  <code>{key.prefix}</code>
                </td>
                <td>
                  <TimeStamp at={key.created_at} />
                </td>
                <td>
                  {key.revoked_at ? (
                    <>
                      Revoked <TimeStamp at={key.revoked_at} />
                    </>
                  ) : (
                    'Active'
                  )}
                </td>
                {mayChange && (
                  <td>
                    {!key.revoked_at && (
                      <span className="row-actions">
                        <button type="button" className="button secondary" onClick={() => setPending({ kind: 'rotate', prefix: key.prefix })}>
                          Rotate {key.prefix}
                        </button>
                        <button type="button" className="button danger" onClick={() => setPending({ kind: 'revoke', prefix: key.prefix })}>
                          Revoke {key.prefix}
                        </button>
                      </span>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {mayChange && (
        <button type="button" className="button secondary" disabled={change.isPending} onClick={() => change.mutate({ kind: 'create' })}>
          New key
        </button>
      )}
      <ConfirmDialog
        open={pending !== null}
        title={pending?.kind === 'rotate' ? `Rotate ${pending.prefix}?` : `Revoke ${pending?.prefix ?? ''}?`}
        confirmLabel={pending?.kind === 'rotate' ? 'Rotate key' : 'Revoke key'}
        onCancel={() => setPending(null)}
        onConfirm={() => pending && change.mutate(pending)}
      >
        {pending?.kind === 'rotate'
          ? 'A new key is made and shown once; then this one stops working.'
          : 'Calls with this key are refused from now on. This cannot be undone.'}
      </ConfirmDialog>
    </section>
  );
}
