import type { FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { adminApi } from '../../api/admin-api';
import type { AgentCardFields, AgentRecord } from '../../api/types';
import { ErrorMessage } from '../../components/error-message';
import { useRole } from '../../session/session-context';

function nullable(data: FormData, name: string): string | null {
  const text = String(data.get(name) ?? '').trim();
  return text === '' ? null : text;
}

/** Edits the agent's card and contact fields; an emptied field is cleared. */
export function AgentCardForm({ agent }: { agent: AgentRecord }) {
  const queryClient = useQueryClient();
  const mayEdit = useRole().allowsFor(agent.handle, 'admin');
  const save = useMutation({
    mutationFn: (fields: AgentCardFields) => adminApi.updateAgent(agent.handle, fields),
    onSuccess: (updated) => {
      queryClient.setQueryData(['agent', agent.handle], updated);
      void queryClient.invalidateQueries({ queryKey: ['agents'] });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    save.mutate({
      name: String(data.get('name') ?? '').trim(),
      role: nullable(data, 'role'),
      description: nullable(data, 'description'),
      skills: String(data.get('skills') ?? '')
        .split(',')
        .map((skill) => skill.trim())
        .filter(Boolean),
      email: nullable(data, 'email'),
      notification_webhook_url: nullable(data, 'notification_webhook_url'),
      slack_webhook_url: nullable(data, 'slack_webhook_url'),
    });
  };
  return (
    <section className="card" aria-labelledby="card-title">
      <h2 id="card-title">Card</h2>
      <form onSubmit={submit} className="grid-form" key={agent.updated_at}>
        <fieldset disabled={!mayEdit} className="plain">
          <div className="field">
            <label htmlFor="card-name">Name</label>
            <input id="card-name" name="name" required defaultValue={agent.name} />
          </div>
          <div className="field">
            <label htmlFor="card-role">Role</label>
            <input id="card-role" name="role" defaultValue={agent.role ?? ''} />
          </div>
          <div className="field wide">
            <label htmlFor="card-description">Description</label>
            <input id="card-description" name="description" defaultValue={agent.description ?? ''} />
          </div>
          <div className="field wide">
            <label htmlFor="card-skills">Skills (comma-separated)</label>
            <input id="card-skills" name="skills" defaultValue={agent.skills.join(', ')} />
          </div>
          <div className="field">
            <label htmlFor="card-email">Email</label>
            <input id="card-email" name="email" type="email" defaultValue={agent.email ?? ''} />
          </div>
          <div className="field">
            <label htmlFor="card-owner">Owner (four eyes)</label>
            <input
              id="card-owner"
              readOnly
              value={agent.owner ? agent.owner.subject : 'none on record'}
              title={
                agent.owner
                  ? `${agent.owner.subject} at ${agent.owner.issuer}`
                  : 'Four eyes refuse every decision on its handoffs until an admin records its owner'
              }
            />
          </div>
          <div className="field wide">
            <label htmlFor="card-webhook">Webhook URL</label>
            <input id="card-webhook" name="notification_webhook_url" type="url" defaultValue={agent.notification_webhook_url ?? ''} />
          </div>
          <div className="field wide">
            <label htmlFor="card-slack">Slack webhook URL</label>
            <input id="card-slack" name="slack_webhook_url" type="url" defaultValue={agent.slack_webhook_url ?? ''} />
          </div>
          {save.isError && <ErrorMessage error={save.error} />}
          {save.isSuccess && <p role="status">Saved.</p>}
          {mayEdit && (
            <div className="actions">
              <button type="submit" className="button" disabled={save.isPending || agent.disabled}>
                Save card
              </button>
            </div>
          )}
        </fieldset>
      </form>
    </section>
  );
}
