import { useId, type FormEvent, type ReactNode } from 'react';
import type { UseMutationResult } from '@tanstack/react-query';
import type { OrgChanges, OrgRecord } from '../../api/types';
import { ErrorMessage } from '../../components/error-message';
import { orgChanges, orgErrorField, QUOTAS, type OrgFormField } from '../../lib/org-form';

type OrgMutation<T> = UseMutationResult<OrgRecord, Error, T>;

/**
 * The fields of an org an admin sets from the console: its name (when creating it), display name
 * and quotas. An error the relay names a field for is shown next to that field; others below them.
 */
export function OrgFieldsForm<T extends OrgChanges>({
  mutation,
  toBody,
  initial,
  withName,
  disabled,
  submitLabel,
  children,
}: {
  mutation: OrgMutation<T>;
  toBody: (changes: OrgChanges, name: string) => T;
  initial?: Record<Exclude<OrgFormField, 'name'>, string>;
  withName: boolean;
  disabled: boolean;
  submitLabel: string;
  children?: ReactNode;
}) {
  const id = useId();
  const errorField = mutation.isError ? orgErrorField(mutation.error) : null;
  const errorId = `${id}-error`;

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const text = (name: string) => String(data.get(name) ?? '');
    const changes = orgChanges({
      display_name: text('display_name'),
      agents: text('agents'),
      requests_per_minute: text('requests_per_minute'),
      open_handoffs: text('open_handoffs'),
      stored_bytes: text('stored_bytes'),
      upstream_in_flight: text('upstream_in_flight'),
    });
    mutation.mutate(toBody(changes, text('name').trim()), { onSuccess: () => withName && form.reset() });
  };

  const field = (name: OrgFormField, label: string, input: (props: Record<string, unknown>) => ReactNode, hint?: string) => {
    const inputId = `${id}-${name}`;
    const hintId = `${inputId}-hint`;
    const invalid = errorField === name;
    const described = [hint ? hintId : null, invalid ? errorId : null].filter(Boolean).join(' ') || undefined;
    return (
      <div className="field narrow">
        <label htmlFor={inputId}>{label}</label>
        {input({ id: inputId, name, 'aria-invalid': invalid || undefined, 'aria-describedby': described })}
        {hint && (
          <p id={hintId} className="hint">
            {hint}
          </p>
        )}
        {invalid && (
          <div id={errorId} data-testid={`error-${name}`}>
            <ErrorMessage error={mutation.error} />
          </div>
        )}
      </div>
    );
  };

  return (
    <form onSubmit={submit} className="grid-form hinted">
      <fieldset disabled={disabled} className="plain">
        {withName &&
          field(
            'name',
            'Name',
            (props) => <input {...props} required autoComplete="off" spellCheck={false} placeholder="payments" />,
            'As after the @ of its agents’ handles: lowercase letters, digits, “.” and “-”.',
          )}
        {field('display_name', 'Display name', (props) => (
          <input {...props} defaultValue={initial?.display_name ?? ''} autoComplete="off" />
        ))}
        {QUOTAS.map(({ quota, label, unit, min, max }) =>
          field(
            quota,
            `${label} quota`,
            (props) => <input {...props} type="number" inputMode="numeric" defaultValue={initial?.[quota] ?? ''} autoComplete="off" />,
            `The most ${unit}, ${min.toLocaleString('en')} to ${max.toLocaleString('en')}; empty: no limit.`,
          ),
        )}
        {mutation.isError && errorField === null && (
          <div id={errorId} className="field wide">
            <ErrorMessage error={mutation.error} />
          </div>
        )}
        {children}
        {!disabled && (
          <div className="actions">
            <button type="submit" className="button" disabled={mutation.isPending}>
              {submitLabel}
            </button>
          </div>
        )}
      </fieldset>
    </form>
  );
}
