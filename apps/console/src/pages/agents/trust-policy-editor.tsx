import { useRef, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { adminApi } from '../../api/admin-api';
import { ApiError } from '../../api/api-error';
import type { AgentRecord } from '../../api/types';
import { ErrorMessage } from '../../components/error-message';
import { TimeStamp } from '../../components/time-stamp';
import { excerptAt, offsetOfLine, trustPolicyToYaml, type LineExcerpt } from '../../lib/trust-yaml';
import { yamlSyntaxProblem, type PolicyProblem } from '../../lib/yaml-check';
import { useRole } from '../../session/session-context';

function PolicyError({ problem, excerpt }: { problem: PolicyProblem; excerpt: LineExcerpt | null }) {
  return (
    <div role="alert" className="error" id="trust-error">
      <p>
        {excerpt ? `Line ${excerpt.line}, column ${excerpt.column}: ` : ''}
        {problem.message}
      </p>
      {excerpt && (
        <pre className="yaml-excerpt" aria-label={`Line ${excerpt.line} of the policy`}>
          {`${excerpt.line} | ${excerpt.text}\n${' '.repeat(String(excerpt.line).length)} | ${excerpt.marker}`}
        </pre>
      )}
    </div>
  );
}

/** The agent's trust policy as `trust.yaml`, checked here and by the relay, then applied; errors point at their line. */
export function TrustPolicyEditor({ agent }: { agent: AgentRecord }) {
  const queryClient = useQueryClient();
  const mayApply = useRole().allowsFor(agent.handle, 'operator');
  const queryKey = ['agent', agent.handle, 'trust'];
  const policy = useQuery({ queryKey, queryFn: () => adminApi.getTrust(agent.handle) });
  const editor = useRef<HTMLTextAreaElement>(null);
  const [sent, setSent] = useState('');
  const [problem, setProblem] = useState<PolicyProblem | null>(null);

  const showProblem = (found: PolicyProblem, yaml: string) => {
    setSent(yaml);
    setProblem(found);
    const field = editor.current;
    if (!found.place || !field) return;
    field.focus();
    const offset = offsetOfLine(yaml, found.place.line) + found.place.column - 1;
    field.setSelectionRange(offset, offset);
  };

  const apply = useMutation({
    // YAML syntax is checked here first; the relay checks it again, and the policy's entries.
    mutationFn: async (yaml: string) => {
      const syntax = await yamlSyntaxProblem(yaml);
      if (syntax) return { problem: syntax };
      return { policy: await adminApi.putTrustYaml(agent.handle, yaml) };
    },
    onMutate: () => setProblem(null),
    onSuccess: (answer, yaml) => {
      if (answer.problem) showProblem(answer.problem, yaml);
      else queryClient.setQueryData(queryKey, answer.policy);
    },
    onError: (error, yaml) => {
      if (error instanceof ApiError && error.reason === 'invalid_params') showProblem({ message: error.message, place: error.place }, yaml);
    },
  });

  if (policy.isPending) return <p role="status">Loading the trust policy…</p>;
  if (policy.isError) return <ErrorMessage error={policy.error} />;

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    apply.mutate(String(new FormData(event.currentTarget).get('policy') ?? ''));
  };
  const excerpt = problem?.place ? excerptAt(sent, problem.place.line, problem.place.column) : null;
  const applied = apply.isSuccess && !problem;

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
          readOnly={!mayApply}
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? 'trust-error' : undefined}
        />
        {problem && <PolicyError problem={problem} excerpt={excerpt} />}
        {apply.isError && !problem && <ErrorMessage error={apply.error} />}
        {applied && <p role="status">Trust policy applied.</p>}
        {mayApply && (
          <div className="actions">
            <button type="submit" className="button" disabled={apply.isPending || agent.disabled}>
              Apply policy
            </button>
          </div>
        )}
      </form>
    </section>
  );
}
