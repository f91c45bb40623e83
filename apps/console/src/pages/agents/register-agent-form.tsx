import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { adminApi } from '../../api/admin-api';
import type { NewAgent, RegisteredAgent } from '../../api/types';
import { ErrorMessage } from '../../components/error-message';
import { RegisteredAgentSecrets } from './registered-agent-secrets';

function optional(value: FormDataEntryValue | null): string | undefined {
  const text = String(value ?? '').trim();
  return text === '' ? undefined : text;
}

/** Registers an agent; its API key and webhook secret are shown once afterwards. */
export function RegisterAgentForm() {
  const queryClient = useQueryClient();
  const [registered, setRegistered] = useState<RegisteredAgent | null>(null);
  const register = useMutation({
    mutationFn: (agent: NewAgent) => adminApi.registerAgent(agent),
    onSuccess: (answer) => {
      setRegistered(answer);
      void queryClient.invalidateQueries({ queryKey: ['agents'] });
    },
  });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const skills = String(data.get('skills') ?? '')
      .split(',')
      .map((skill) => skill.trim())
      .filter(Boolean);
    const agent: NewAgent = {
      handle: String(data.get('handle') ?? '').trim(),
      name: String(data.get('name') ?? '').trim(),
      role: optional(data.get('role')),
      description: optional(data.get('description')),
      email: optional(data.get('email')),
      notification_webhook_url: optional(data.get('notification_webhook_url')),
      ...(skills.length > 0 ? { skills } : {}),
    };
    register.mutate(agent, { onSuccess: () => form.reset() });
  };

  if (registered) return <RegisteredAgentSecrets registered={registered} onDone={() => setRegistered(null)} />;
  return (
    <section className="card" aria-labelledby="register-title">
      <h2 id="register-title">Register an agent</h2>
      <form onSubmit={submit} className="grid-form">
        <div className="field">
          <label htmlFor="register-handle">Handle</label>
          <input id="register-handle" name="handle" required placeholder="name@org" autoComplete="off" />
        </div>
        <div className="field">
          <label htmlFor="register-name">Name</label>
          <input id="register-name" name="name" required autoComplete="off" />
        </div>
        <div className="field">
          <label htmlFor="register-role">Role</label>
          <input id="register-role" name="role" autoComplete="off" />
        </div>
        <div className="field">
          <label htmlFor="register-email">Email</label>
          <input id="register-email" name="email" type="email" autoComplete="off" />
        </div>
        <div className="field wide">
          <label htmlFor="register-description">Description</label>
          <input id="register-description" name="description" autoComplete="off" />
        </div>
        <div className="field wide">
          <label htmlFor="register-skills">Skills (comma-separated)</label>
          <input id="register-skills" name="skills" autoComplete="off" />
        </div>
        <div className="field wide">
          <label htmlFor="register-webhook">Webhook URL</label>
          <input id="register-webhook" name="notification_webhook_url" type="url" autoComplete="off" />
        </div>
        {register.isError && <ErrorMessage error={register.error} />}
        <div className="actions">
          <button type="submit" className="button" disabled={register.isPending}>
            Register
          </button>
        </div>
      </form>
    </section>
  );
}
