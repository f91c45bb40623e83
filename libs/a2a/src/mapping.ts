import { RelayError, type TaskState, type WireVersion } from '@app/contracts';

/**
 * The one table of A2A task states and relay states (docs/state-machine.md#states), one row per A2A
 * state: its v0.3 and v1.0 names and v1.0 enum number, and what it stands for in each direction.
 * - `shows`: the relay state the relay renders as it, to its own clients and in push payloads.
 * - `read`: what a client's use of it reads as: a relay state, `'none'` (no state given) or
 *   `'refused'` (auth-required: only the relay enters `held`, for a held handoff).
 * - `upstream`: what an upstream agent's task in it makes of the relay task (null: not started yet).
 *   An upstream's auth-required is a request for input; a task it canceled fails the relay task,
 *   as only the sender cancels a relay task.
 * - `aliases`: the relay's own spellings, read as the state too.
 */
export const A2A_TASK_STATES: readonly A2aTaskStateRow[] = [
  { '0.3': 'unknown', '1.0': 'TASK_STATE_UNSPECIFIED', number: 0, shows: null, read: 'none', upstream: null },
  { '0.3': 'submitted', '1.0': 'TASK_STATE_SUBMITTED', number: 1, shows: 'pending', read: 'pending', upstream: null },
  { '0.3': 'working', '1.0': 'TASK_STATE_WORKING', number: 2, shows: 'accepted', read: 'accepted', upstream: 'accepted' },
  { '0.3': 'completed', '1.0': 'TASK_STATE_COMPLETED', number: 3, shows: 'completed', read: 'completed', upstream: 'completed' },
  { '0.3': 'failed', '1.0': 'TASK_STATE_FAILED', number: 4, shows: 'failed', read: 'failed', upstream: 'failed' },
  { '0.3': 'canceled', '1.0': 'TASK_STATE_CANCELED', number: 5, shows: 'cancelled', read: 'cancelled', upstream: 'failed', aliases: ['cancelled'] },
  {
    '0.3': 'input-required',
    '1.0': 'TASK_STATE_INPUT_REQUIRED',
    number: 6,
    shows: 'input_required',
    read: 'input_required',
    upstream: 'input_required',
    aliases: ['input_required'],
  },
  { '0.3': 'rejected', '1.0': 'TASK_STATE_REJECTED', number: 7, shows: 'rejected', read: 'rejected', upstream: 'rejected' },
  // Waiting for a person's approval (docs/decisions/0024-held-handoffs.md): only its sender sees it.
  { '0.3': 'auth-required', '1.0': 'TASK_STATE_AUTH_REQUIRED', number: 8, shows: 'held', read: 'refused', upstream: 'input_required' },
];

export interface A2aTaskStateRow {
  '0.3': string;
  '1.0': string;
  number: number;
  shows: TaskState | null;
  read: TaskState | 'none' | 'refused';
  upstream: TaskState | null;
  aliases?: readonly string[];
}

const ROW_SHOWING = new Map<TaskState, A2aTaskStateRow>();
const ROW_BY_NAME = new Map<string | number, A2aTaskStateRow>();
const ROW_BY_NUMBER = new Map<number, A2aTaskStateRow>();
for (const row of A2A_TASK_STATES) {
  if (row.shows !== null) ROW_SHOWING.set(row.shows, row);
  for (const name of [row['0.3'], row['1.0'], ...(row.aliases ?? [])]) ROW_BY_NAME.set(name, row);
  ROW_BY_NUMBER.set(row.number, row);
}

export function toWireState(state: TaskState, version: WireVersion): string {
  const row = ROW_SHOWING.get(state);
  if (!row) throw new Error(`no A2A state shows the relay state ${state}`);
  return row[version];
}

/**
 * Reads an A2A task state in either wire spelling (or its v1.0 enum number) as an internal state.
 * `TASK_STATE_UNSPECIFIED` / `unknown` / 0 mean "no state" and give `undefined`; anything else
 * unknown (including auth-required, which only the relay enters, for a held handoff) is `invalid_params` on `field`.
 */
export function fromWireState(value: unknown, field: string): TaskState | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const row = typeof value === 'number' ? ROW_BY_NUMBER.get(value) : typeof value === 'string' ? ROW_BY_NAME.get(value) : undefined;
  if (row?.read === 'none') return undefined;
  if (!row || row.read === 'refused')
    throw new RelayError('invalid_params', `${field} is not a task state the relay knows: ${JSON.stringify(value)}`, { field });
  return row.read;
}

/** What an upstream agent's task in this A2A state (its v1.0 enum number) makes of the relay task; null: not started yet, or a state the relay does not know. */
export function relayStateOfUpstream(state: number | undefined): TaskState | null {
  return state === undefined ? null : (ROW_BY_NUMBER.get(state)?.upstream ?? null);
}

export type MessageAuthor = 'sender' | 'recipient';

/** The task's sender speaks as the A2A user, its recipient as the agent. */
export function toWireRole(author: MessageAuthor, version: WireVersion): string {
  if (version === '1.0') return author === 'sender' ? 'ROLE_USER' : 'ROLE_AGENT';
  return author === 'sender' ? 'user' : 'agent';
}
