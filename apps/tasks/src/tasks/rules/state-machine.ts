import { RelayError, type CancelMode, type TaskCommand, type TaskEventType, type TaskState } from '@app/contracts';

export type Party = 'sender' | 'recipient';

export interface TransitionRule {
  from: readonly TaskState[];
  /** Null for a progress update, which keeps the state. */
  to: TaskState | null;
  who: Party;
  /** The task event written with the change. */
  event: TaskEventType | null;
}

const ACTIVE: readonly TaskState[] = ['pending', 'accepted', 'input_required'];

/** The transition table of docs/state-machine.md#transitions. */
export function transitionRule(command: TaskCommand, cancelMode: CancelMode = 'pending_only'): TransitionRule {
  switch (command) {
    case 'accept':
      return { from: ['pending'], to: 'accepted', who: 'recipient', event: 'accepted' };
    case 'complete':
      return { from: ['accepted', 'input_required'], to: 'completed', who: 'recipient', event: 'completed' };
    case 'cancel':
      // A held task may be withdrawn by its sender whichever cancel it uses.
      return { from: cancelMode === 'any_active' ? ['held', ...ACTIVE] : ['held', 'pending'], to: 'cancelled', who: 'sender', event: 'canceled' };
    case 'decline':
      return { from: ['pending'], to: 'rejected', who: 'recipient', event: 'rejected' };
    case 'fail':
      return { from: ['accepted', 'input_required'], to: 'failed', who: 'recipient', event: 'failed' };
    case 'request_input':
      return { from: ['accepted'], to: 'input_required', who: 'recipient', event: 'input_required' };
    case 'progress':
      return { from: ['accepted', 'input_required'], to: null, who: 'recipient', event: null };
  }
}

/**
 * Checks a command against the task's current state and the caller's party. The standard A2A
 * cancel (`any_active`) answers every refusal with `task_not_cancelable`.
 */
export function checkTransition(command: TaskCommand, cancelMode: CancelMode | undefined, state: TaskState, party: Party): TransitionRule {
  const rule = transitionRule(command, cancelMode);
  const a2aCancel = command === 'cancel' && cancelMode === 'any_active';
  if (party !== rule.who) {
    if (a2aCancel) throw new RelayError('task_not_cancelable', "Only the task's sender can cancel it", { state });
    throw new RelayError('not_authorized_transition', `Only the task's ${rule.who} can ${command === 'progress' ? 'update its status' : command} it`, {
      transition: command,
      required_role: rule.who,
    });
  }
  if (!rule.from.includes(state)) {
    if (a2aCancel) throw new RelayError('task_not_cancelable', `A task in state ${state} cannot be canceled`, { state });
    throw new RelayError('invalid_transition', `Transition ${command} is not valid from state ${state}`, {
      transition: command,
      state,
      allowed_from: rule.from,
    });
  }
  return rule;
}

/** The column that records when a state was entered. */
export const STATE_TIMESTAMP_COLUMN: Partial<Record<TaskState, string>> = {
  accepted: 'accepted_at',
  completed: 'completed_at',
  cancelled: 'cancelled_at',
  failed: 'failed_at',
  rejected: 'rejected_at',
};

interface TaskParties {
  id: string;
  sender_id: string;
  recipient_id: string;
  /** A held task (and one whose hold ended other than approved) does not exist for its recipient. */
  hidden_from_recipient: boolean;
}

/**
 * Which side of the task the caller is on; anyone else is refused. With `counterpartId` (a call on
 * that agent's endpoint, `/a2a/{handle}`), only a task between the caller and that agent exists.
 * The recipient of a task hidden from it (held for approval) is refused as anyone else.
 */
export function partyOf(task: TaskParties, callerId: string, counterpartId?: string): Party {
  const party = task.sender_id === callerId ? 'sender' : task.recipient_id === callerId && !task.hidden_from_recipient ? 'recipient' : undefined;
  if (party === undefined) throw new RelayError('not_a_participant', 'You are not a participant of this task', { task_id: task.id });
  if (counterpartId !== undefined && (party === 'sender' ? task.recipient_id : task.sender_id) !== counterpartId) throw offEndpoint(task.id);
  return party;
}

/** A task that is not between the caller and the endpoint's agent: on that endpoint it does not exist. */
export function offEndpoint(taskId: string): RelayError {
  return new RelayError('thread_not_found', 'Task not found', { task_id: taskId });
}
