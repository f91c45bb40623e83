import { useRef, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { adminApi } from '../../api/admin-api';
import { ApiError } from '../../api/api-error';
import type { AgentRecord } from '../../api/types';
import { ErrorMessage } from '../../components/error-message';
import { TimeStamp } from '../../components/time-stamp';
import { excerptAt, offsetOfLine, trustPolicyToYaml, type LineExcerpt } from '../../lib/trust-yaml';

function YamlError({ error, excerpt }: { error: ApiError; excerpt: LineExcerpt | null }) {
  return (
    <div role="alert" className="error" id="trust-error">
      <p>
        {excerpt ? `Line ${excerpt.line}, column ${excerpt.column}: ` : ''}
        {error.message}
      </p>
      {excerpt && (
        <pre className="yaml-excerpt" aria-label={`Line ${excerpt.line} of the policy`}>
          {`${excerpt.line} | ${excerpt.text}\n${' '.repeat(String(excerpt.line).length)} | ${excerpt.marker}`}
        </pre>
      )}
    </div>
  );
}

/** The agent's trust policy as `trust.yaml`, checked and applied by the relay; errors point at their line. */
export function TrustPolicyEditor({ agent }: { agent: AgentRecord }) {
  const queryClient = useQueryClient();
  const queryKey = ['agent', agent.handle, 'trust'];
  const policy = useQuery({ queryKey, queryFn: () => adminApi.getTrust(agent.handle) });
  const editor = useRef<HTMLTextAreaElement>(null);
  const [sent, setSent] = useState('');
  const apply = useMutation({
    mutationFn: (yaml: string) => adminApi.putTrustYaml(agent.handle, yaml),
    onSuccess: (updated) => queryClient.setQueryData(queryKey, updated),
    onError: (error, yaml) => {
      const place = error instanceof ApiError ? error.place : null;
      const field = editor.current;
      if (!place || !field) return;
      field.focus();
      const offset = offsetOfLine(yaml, place.line) + place.column - 1;
      field.setSelectionRange(offset, offset);
    },
  });

  if (policy.isPending) return <p role="status">Loading the trust policy…</p>;
  if (policy.isError) return <ErrorMessage error={policy.error} />;

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const yaml = String(new FormData(event.currentTarget).get('policy') ?? '');
    setSent(yaml);
    apply.mutate(yaml);
  };
  const error = apply.error instanceof ApiError ? apply.error : null;
  const place = error?.place;
  const excerpt = place ? excerptAt(sent, place.line, place.column) : null;

  return (
    <section className="card" aria-labelledby="trust-title">
      <h2 id="trust-title">Trust policy</h2>
      <p className="hint">
        Who may send to {agent.handle}: <code>allow</code> and <code>block</code> list handles or <code>*@org</code>. Without a policy only teammates (same org)
        may.{' '}
        {policy.data.updated_at ? (
          <>
            Last changed <TimeStamp at={policy.data.updated_at} />.
          </>
        ) : (
          'No policy set yet.'
        )}
      </p>
      <form onSubmit={submit}>
        <label htmlFor="trust-yaml">Policy (YAML)</label>
        <textarea
          id="trust-yaml"
          ref={editor}
          name="policy"
          rows={10}
          spellCheck={false}
          defaultValue={trustPolicyToYaml(policy.data)}
          key={policy.data.updated_at ?? 'unset'}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? 'trust-error' : undefined}
        />
        {error && <YamlError error={error} excerpt={excerpt} />}
        {apply.isError && !error && <ErrorMessage error={apply.error} />}
        {apply.isSuccess && <p role="status">Trust policy applied.</p>}
        <div className="actions">
          <button type="submit" className="button" disabled={apply.isPending || agent.disabled}>
            Apply policy
          </button>
        </div>
      </form>
    </section>
  );
}
