import { RelayError, type TaskState, type WireVersion } from '@app/contracts';

/** Internal state → A2A v0.3 and v1.0 names (the table of docs/state-machine.md#states). */
const STATE_NAMES: Record<TaskState, { '0.3': string; '1.0': string }> = {
  // Waiting for a person's approval (docs/decisions/0024-held-handoffs.md): only its sender sees it.
  held: { '0.3': 'auth-required', '1.0': 'TASK_STATE_AUTH_REQUIRED' },
  pending: { '0.3': 'submitted', '1.0': 'TASK_STATE_SUBMITTED' },
  accepted: { '0.3': 'working', '1.0': 'TASK_STATE_WORKING' },
  input_required: { '0.3': 'input-required', '1.0': 'TASK_STATE_INPUT_REQUIRED' },
  completed: { '0.3': 'completed', '1.0': 'TASK_STATE_COMPLETED' },
  cancelled: { '0.3': 'canceled', '1.0': 'TASK_STATE_CANCELED' },
  failed: { '0.3': 'failed', '1.0': 'TASK_STATE_FAILED' },
  rejected: { '0.3': 'rejected', '1.0': 'TASK_STATE_REJECTED' },
};

/** v1.0 TaskState enum numbers (ProtoJSON parsers accept the integer values on input too). */
const STATE_NUMBERS: Record<number, TaskState> = {
  1: 'pending',
  2: 'accepted',
  3: 'completed',
  4: 'failed',
  5: 'cancelled',
  6: 'input_required',
  7: 'rejected',
};

const STATE_BY_WIRE_NAME = new Map<string, TaskState>();
for (const [state, names] of Object.entries(STATE_NAMES) as [TaskState, { '0.3': string; '1.0': string }][]) {
  // Only the relay enters `held`: a state reported as auth-required is refused like any unknown one.
  if (state === 'held') continue;
  STATE_BY_WIRE_NAME.set(names['0.3'], state);
  STATE_BY_WIRE_NAME.set(names['1.0'], state);
}
STATE_BY_WIRE_NAME.set('input_required', 'input_required');
STATE_BY_WIRE_NAME.set('cancelled', 'cancelled');

export function toWireState(state: TaskState, version: WireVersion): string {
  return STATE_NAMES[state][version];
}

/**
 * Reads an A2A task state in either wire spelling (or its v1.0 enum number) as an internal state.
 * `TASK_STATE_UNSPECIFIED` / `unknown` / 0 mean "no state" and give `undefined`; anything else
 * unknown (including auth-required, which only the relay enters, for a held handoff) is `invalid_params` on `field`.
 */
export function fromWireState(value: unknown, field: string): TaskState | undefined {
  if (value === undefined || value === null || value === '' || value === 0 || value === 'TASK_STATE_UNSPECIFIED' || value === 'unknown') return undefined;
  const state = typeof value === 'number' ? STATE_NUMBERS[value] : typeof value === 'string' ? STATE_BY_WIRE_NAME.get(value) : undefined;
  if (!state) throw new RelayError('invalid_params', `${field} is not a task state the relay knows: ${JSON.stringify(value)}`, { field });
  return state;
}

export type MessageAuthor = 'sender' | 'recipient';

/** The task's sender speaks as the A2A user, its recipient as the agent. */
export function toWireRole(author: MessageAuthor, version: WireVersion): string {
  if (version === '1.0') return author === 'sender' ? 'ROLE_USER' : 'ROLE_AGENT';
  return author === 'sender' ? 'user' : 'agent';
}
