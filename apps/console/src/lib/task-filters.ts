import { INTENTS, TASK_STATES, type Intent, type TaskState } from '../api/types';
import { orgOfHandle } from './roles';

export const ROLES = ['either', 'sender', 'recipient'] as const;
export type Role = (typeof ROLES)[number];

/** The filters of the live and search pages, as they appear in the URL's query. */
export interface TaskFilters {
  /** One org of the several a person sees: handoffs one of its agents is party to. */
  org: string;
  agent: string;
  role: Role;
  states: TaskState[];
  intent: Intent | '';
  context_id: string;
  created_after: string;
  created_before: string;
}

export const NO_FILTERS: TaskFilters = { org: '', agent: '', role: 'either', states: [], intent: '', context_id: '', created_after: '', created_before: '' };

function oneOf<T extends string>(value: string | null, allowed: readonly T[], fallback: T): T {
  return allowed.includes(value as T) ? (value as T) : fallback;
}

/** Reads the filters from a URL query; unknown values fall back to "any". */
export function filtersFromQuery(query: URLSearchParams): TaskFilters {
  const states = (query.get('state') ?? '').split(',').filter((state): state is TaskState => TASK_STATES.includes(state as TaskState));
  return {
    org: query.get('org')?.trim().toLowerCase() ?? '',
    agent: query.get('agent')?.trim() ?? '',
    role: oneOf(query.get('role'), ROLES, 'either'),
    states,
    intent: oneOf<Intent | ''>(query.get('intent'), INTENTS, ''),
    context_id: query.get('context_id')?.trim() ?? '',
    created_after: query.get('created_after') ?? '',
    created_before: query.get('created_before') ?? '',
  };
}

/** The filters as URL query entries, leaving out what is "any" (the role only counts with an agent). */
export function filtersToQuery(filters: TaskFilters): URLSearchParams {
  const query = new URLSearchParams();
  if (filters.org) query.set('org', filters.org);
  if (filters.agent) {
    query.set('agent', filters.agent);
    if (filters.role !== 'either') query.set('role', filters.role);
  }
  if (filters.states.length > 0) query.set('state', filters.states.join(','));
  if (filters.intent) query.set('intent', filters.intent);
  if (filters.context_id) query.set('context_id', filters.context_id);
  if (filters.created_after) query.set('created_after', filters.created_after);
  if (filters.created_before) query.set('created_before', filters.created_before);
  return query;
}

/** The API's query for the filters: the time range as ISO instants. */
export function filtersToApiQuery(filters: TaskFilters): URLSearchParams {
  const query = filtersToQuery(filters);
  for (const key of ['created_after', 'created_before'] as const) {
    const value = filters[key];
    if (!value) continue;
    const instant = new Date(value);
    if (Number.isNaN(instant.getTime())) query.delete(key);
    else query.set(key, instant.toISOString());
  }
  return query;
}

/** Whether a task (as a live event names it) passes the filters, so it belongs on the live page. */
export function matchesFilters(
  task: { state: TaskState; intent: Intent; sender: string; recipient: string; context_id?: string; created_at?: string },
  filters: TaskFilters,
): boolean {
  if (filters.org && orgOfHandle(task.sender) !== filters.org && orgOfHandle(task.recipient) !== filters.org) return false;
  if (filters.agent) {
    const agent = filters.agent.toLowerCase();
    const asSender = task.sender.toLowerCase() === agent;
    const asRecipient = task.recipient.toLowerCase() === agent;
    if (filters.role === 'sender' ? !asSender : filters.role === 'recipient' ? !asRecipient : !asSender && !asRecipient) return false;
  }
  if (filters.states.length > 0 && !filters.states.includes(task.state)) return false;
  if (filters.intent && task.intent !== filters.intent) return false;
  if (filters.context_id && task.context_id !== undefined && task.context_id !== filters.context_id) return false;
  if (task.created_at) {
    const created = Date.parse(task.created_at);
    if (filters.created_after && created < Date.parse(filters.created_after)) return false;
    if (filters.created_before && created >= Date.parse(filters.created_before)) return false;
  }
  return true;
}
