import { ADMIN_TASK_LIMITS, invalidParams, LIST_ROLES, TASK_STATES, type ListRole, type SearchHighlight, type TaskState, type TaskView } from '@app/contracts';
import { requiredNonBlank } from './params';
import { renderListItem } from './render';

type Params = Record<string, unknown>;

export interface RelaySearchParams {
  query: string;
  role: ListRole;
  states?: TaskState[];
  limit: number;
  cursor?: string;
}

function objectParam(params: Params, key: string): Params {
  const value = params[key];
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidParams(key, 'must be an object');
  return value as Params;
}

/** `tasks/search` params: `{query, filter?: {role, status[]}, page?: {limit, cursor}}` (role `either` by default). */
export function parseRelaySearchParams(params: Params): RelaySearchParams {
  const query = requiredNonBlank(params, 'query', 'query', ADMIN_TASK_LIMITS.queryChars);
  const filter = objectParam(params, 'filter');
  const page = objectParam(params, 'page');
  const role = filter.role ?? 'either';
  if (typeof role !== 'string' || !(LIST_ROLES as readonly string[]).includes(role)) throw invalidParams('filter.role', 'must be recipient, sender or either');
  let states: TaskState[] | undefined;
  if (filter.status !== undefined && filter.status !== null) {
    const raw = typeof filter.status === 'string' ? [filter.status] : filter.status;
    if (!Array.isArray(raw) || !raw.every((state) => typeof state === 'string' && (TASK_STATES as readonly string[]).includes(state))) {
      throw invalidParams('filter.status', `must be an array of states (${TASK_STATES.join(', ')})`);
    }
    // Each state once: the filter is a set, and so at most TASK_STATES.length long.
    states = [...new Set(raw as TaskState[])];
  }
  let limit: number = ADMIN_TASK_LIMITS.searchDefaultLimit;
  if (page.limit !== undefined && page.limit !== null) {
    if (!Number.isInteger(page.limit) || (page.limit as number) < 1 || (page.limit as number) > ADMIN_TASK_LIMITS.searchMaxLimit) {
      throw invalidParams('page.limit', `must be an integer from 1 to ${ADMIN_TASK_LIMITS.searchMaxLimit}`);
    }
    limit = page.limit as number;
  }
  const cursor = page.cursor === undefined || page.cursor === null ? undefined : requiredNonBlank(page, 'cursor', 'page.cursor', ADMIN_TASK_LIMITS.cursorChars);
  return { query, role: role as ListRole, ...(states ? { states } : {}), limit, ...(cursor ? { cursor } : {}) };
}

/** A `tasks/search` hit: the `tasks/list` item of the task, with its highlights. */
export function renderSearchItem(task: TaskView, highlights: SearchHighlight[]): Record<string, unknown> {
  return { ...renderListItem(task), highlights };
}
