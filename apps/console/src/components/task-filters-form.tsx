import type { FormEvent, ReactNode } from 'react';
import { INTENTS, TASK_STATES, type Intent, type TaskState } from '../api/types';
import { NO_FILTERS, ROLES, type Role, type TaskFilters } from '../lib/task-filters';
import { intentLabel } from './intent-label';
import { OrgFilterField } from './org-filter-field';
import { stateLabel } from './state-badge';

const ROLE_LABELS: Record<Role, string> = { either: 'Sender or recipient', sender: 'Sender', recipient: 'Recipient' };

function readFilters(form: HTMLFormElement): TaskFilters {
  const data = new FormData(form);
  const text = (name: string) => String(data.get(name) ?? '').trim();
  return {
    org: text('org').toLowerCase(),
    agent: text('agent'),
    role: text('role') as Role,
    states: data.getAll('state').map(String) as TaskState[],
    intent: text('intent') as Intent | '',
    context_id: text('context_id'),
    created_after: text('created_after'),
    created_before: text('created_before'),
  };
}

/**
 * The filters of the live and search pages. The form is keyed by the URL's filters, so going
 * back and forth in the history shows the filters of that page.
 */
export function TaskFiltersForm({
  filters,
  onApply,
  label,
  children,
}: {
  filters: TaskFilters;
  onApply: (filters: TaskFilters, form: FormData) => void;
  label: string;
  children?: ReactNode;
}) {
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    onApply(readFilters(event.currentTarget), new FormData(event.currentTarget));
  };
  return (
    <form className="filters" role="search" aria-label={label} onSubmit={submit} key={JSON.stringify(filters)}>
      {children}
      <OrgFilterField value={filters.org} />
      <div className="field">
        <label htmlFor="filter-agent">Agent</label>
        <input id="filter-agent" name="agent" defaultValue={filters.agent} placeholder="name@org" autoComplete="off" />
      </div>
      <div className="field">
        <label htmlFor="filter-role">Agent's role</label>
        <select id="filter-role" name="role" defaultValue={filters.role}>
          {ROLES.map((role) => (
            <option key={role} value={role}>
              {ROLE_LABELS[role]}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="filter-intent">Intent</label>
        <select id="filter-intent" name="intent" defaultValue={filters.intent}>
          <option value="">Any intent</option>
          {INTENTS.map((intent) => (
            <option key={intent} value={intent}>
              {intentLabel(intent)}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="filter-context">Context</label>
        <input id="filter-context" name="context_id" defaultValue={filters.context_id} autoComplete="off" />
      </div>
      <div className="field">
        <label htmlFor="filter-after">Created after</label>
        <input id="filter-after" name="created_after" type="datetime-local" defaultValue={filters.created_after} />
      </div>
      <div className="field">
        <label htmlFor="filter-before">Created before</label>
        <input id="filter-before" name="created_before" type="datetime-local" defaultValue={filters.created_before} />
      </div>
      <fieldset className="states">
        <legend>States</legend>
        {TASK_STATES.map((state) => (
          <label key={state} className="check">
            <input type="checkbox" name="state" value={state} defaultChecked={filters.states.includes(state)} />
            {stateLabel(state)}
          </label>
        ))}
      </fieldset>
      <div className="actions">
        <button type="submit" className="button">
          Apply filters
        </button>
        <button
          type="button"
          className="button secondary"
          onClick={(event) => event.currentTarget.form && onApply({ ...NO_FILTERS }, new FormData(event.currentTarget.form))}
        >
          Clear filters
        </button>
      </div>
    </form>
  );
}
