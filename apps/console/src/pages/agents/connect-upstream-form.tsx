import { useId, useState, type FormEvent, type ReactNode } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { adminApi } from '../../api/admin-api';
import type { NewUpstreamAgent, RegisteredAgent } from '../../api/types';
import { ErrorMessage } from '../../components/error-message';
import { ShownOnceSecret } from '../../components/shown-once-secret';
import {
  CREDENTIAL_FIELDS,
  CREDENTIAL_KINDS,
  newUpstreamAgent,
  UPSTREAM_FORM_FIELDS,
  upstreamErrorField,
  type CredentialKind,
  type UpstreamFormField,
} from '../../lib/upstream-form';

const SECRET_LABELS: Record<CredentialKind, string> = {
  none: 'Secret',
  api_key: 'API key',
  bearer: 'Bearer token',
  oauth2: 'Client secret',
};

/** What connecting shows once: the relay's own API key and webhook secret for the agent (never the credential given). */
function ConnectedAgent({ registered, onDone }: { registered: RegisteredAgent; onDone: () => void }) {
  const handle = registered.agent.handle;
  return (
    <section className="card notice" aria-labelledby="connected-title">
      <h2 id="connected-title">Connected {handle}</h2>
      <p>
        The relay read the agent&apos;s card and delivers handoffs to its A2A server; the credential you gave is kept sealed and never shown.{' '}
        <Link to={`/agents/${encodeURIComponent(handle)}`}>Open {handle}</Link> to see the card it accepted.
      </p>
      <p>The agent&apos;s own relay credentials, for when it sends handoffs itself: copy them now, the relay shows them only this once.</p>
      <ShownOnceSecret label="API key" value={registered.api_key} />
      <ShownOnceSecret label="Webhook secret" value={registered.webhook_secret} />
      <button type="button" className="button secondary" onClick={onDone}>
        I have copied them
      </button>
    </section>
  );
}

/**
 * Connects an agent that runs its own A2A server (`POST /admin/agents` with `upstream`): the relay
 * reads its card through the SSRF guard before anything is created. The credential goes in a
 * password input and is cleared after every attempt; an error is shown under the input it is about
 * (and tied to it for screen readers), else under the form.
 */
export function ConnectUpstreamForm() {
  const queryClient = useQueryClient();
  const id = useId();
  const [kind, setKind] = useState<CredentialKind>('none');
  const [connected, setConnected] = useState<RegisteredAgent | null>(null);
  const connect = useMutation({
    mutationFn: (agent: NewUpstreamAgent) => adminApi.registerAgent(agent),
    onSuccess: (answer) => {
      setConnected(answer);
      void queryClient.invalidateQueries({ queryKey: ['agents'] });
    },
  });
  const errorField = connect.isError ? upstreamErrorField(connect.error) : null;
  const errorId = `${id}-error`;

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const values = Object.fromEntries(UPSTREAM_FORM_FIELDS.map((field) => [field, String(data.get(field) ?? '')])) as Record<UpstreamFormField, string>;
    const secret = form.elements.namedItem('secret');
    if (secret instanceof HTMLInputElement) secret.value = '';
    connect.mutate(newUpstreamAgent(values), {
      onSuccess: () => {
        form.reset();
        setKind('none');
      },
    });
  };

  if (connected) return <ConnectedAgent registered={connected} onDone={() => setConnected(null)} />;

  const field = (name: UpstreamFormField, label: string, input: (props: Record<string, unknown>) => ReactNode, hint?: string, wide = false) => {
    const inputId = `${id}-${name}`;
    const hintId = `${inputId}-hint`;
    const invalid = errorField === name;
    const described = [hint ? hintId : null, invalid ? errorId : null].filter(Boolean).join(' ') || undefined;
    return (
      <div className={wide ? 'field wide' : 'field'}>
        <label htmlFor={inputId}>{label}</label>
        {input({ id: inputId, name, 'aria-invalid': invalid || undefined, 'aria-describedby': described })}
        {hint && (
          <p id={hintId} className="hint">
            {hint}
          </p>
        )}
        {invalid && (
          <div id={errorId}>
            <ErrorMessage error={connect.error} />
          </div>
        )}
      </div>
    );
  };
  const shows = (name: UpstreamFormField) => CREDENTIAL_FIELDS[kind].includes(name);

  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Connect an A2A agent</h2>
      <p className="hint">For an agent that runs its own A2A server: the relay reads its agent card and delivers its handoffs there.</p>
      <form onSubmit={submit} className="grid-form">
        {field('handle', 'Handle', (props) => (
          <input {...props} required placeholder="name@org" autoComplete="off" />
        ))}
        {field('name', 'Name', (props) => (
          <input {...props} required autoComplete="off" />
        ))}
        {field(
          'card_url',
          'Agent card URL',
          (props) => (
            <input {...props} type="url" required placeholder="https://agent.example/.well-known/agent-card.json" autoComplete="off" />
          ),
          'The relay reads it through its SSRF guard: an address on a loopback or private network is refused unless the relay is set to allow it.',
          true,
        )}
        {field('scheme', 'Credential', (props) => (
          <select {...props} value={kind} onChange={(event) => setKind(event.target.value as CredentialKind)}>
            {CREDENTIAL_KINDS.map((option) => (
              <option key={option.kind} value={option.kind}>
                {option.label}
              </option>
            ))}
          </select>
        ))}
        {shows('client_id') && field('client_id', 'Client ID', (props) => <input {...props} required autoComplete="off" />)}
        {shows('secret') &&
          field(
            'secret',
            SECRET_LABELS[kind],
            (props) => <input {...props} type="password" required autoComplete="off" spellCheck={false} />,
            'Kept sealed by the relay and never shown again, here or in the API.',
            true,
          )}
        {shows('header_name') &&
          field(
            'header_name',
            'Header name',
            (props) => <input {...props} placeholder="X-API-Key" autoComplete="off" />,
            'Default: the header the card names, else X-API-Key.',
          )}
        {shows('token_url') &&
          field(
            'token_url',
            'Token URL',
            (props) => <input {...props} type="url" autoComplete="off" />,
            "Default: the card's OAuth2 client-credentials token URL.",
            true,
          )}
        {shows('scope') && field('scope', 'Scope', (props) => <input {...props} autoComplete="off" />)}
        {shows('resource') && field('resource', 'Resource', (props) => <input {...props} type="url" autoComplete="off" />)}
        {connect.isError && errorField === null && (
          <div id={errorId} className="field wide">
            <ErrorMessage error={connect.error} />
          </div>
        )}
        <div className="actions">
          <button type="submit" className="button" disabled={connect.isPending}>
            {connect.isPending ? 'Reading the card…' : 'Connect'}
          </button>
        </div>
      </form>
    </section>
  );
}
