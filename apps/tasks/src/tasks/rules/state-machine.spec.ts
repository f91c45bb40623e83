import { RelayError, TASK_STATES, type TaskCommand, type TaskState } from '@app/contracts';
import { checkTransition, partyOf, type Party } from './state-machine';

function outcome(command: TaskCommand, state: TaskState, party: Party, mode?: 'pending_only' | 'any_active'): string {
  try {
    const rule = checkTransition(command, mode, state, party);
    return `ok:${rule.to ?? state}`;
  } catch (error) {
    return (error as RelayError).reason;
  }
}

describe('the transition table', () => {
  it.each([
    ['accept', 'pending', 'recipient', 'ok:accepted'],
    ['complete', 'accepted', 'recipient', 'ok:completed'],
    ['complete', 'input_required', 'recipient', 'ok:completed'],
    ['cancel', 'pending', 'sender', 'ok:cancelled'],
    ['decline', 'pending', 'recipient', 'ok:rejected'],
    ['fail', 'accepted', 'recipient', 'ok:failed'],
    ['fail', 'input_required', 'recipient', 'ok:failed'],
    ['request_input', 'accepted', 'recipient', 'ok:input_required'],
    ['progress', 'accepted', 'recipient', 'ok:accepted'],
  ] as const)('%s from %s by the %s → %s', (command, state, party, expected) => {
    expect(outcome(command, state, party)).toBe(expected);
  });

  it('allows each transition only from its states (-32008 otherwise)', () => {
    const allowed: Record<string, TaskState[]> = {
      accept: ['pending'],
      complete: ['accepted', 'input_required'],
      decline: ['pending'],
      fail: ['accepted', 'input_required'],
      request_input: ['accepted'],
    };
    for (const [command, states] of Object.entries(allowed)) {
      for (const state of TASK_STATES) {
        expect(outcome(command as TaskCommand, state, 'recipient')).toEqual(states.includes(state) ? expect.stringMatching(/^ok:/) : 'invalid_transition');
      }
    }
    // The sender withdraws a task before the recipient takes it up, and a held one (its recipient never saw it).
    for (const state of TASK_STATES)
      expect(outcome('cancel', state, 'sender')).toBe(state === 'pending' || state === 'held' ? 'ok:cancelled' : 'invalid_transition');
  });

  it('refuses the wrong party with not_authorized_transition', () => {
    expect(outcome('accept', 'pending', 'sender')).toBe('not_authorized_transition');
    expect(outcome('complete', 'accepted', 'sender')).toBe('not_authorized_transition');
    expect(outcome('cancel', 'pending', 'recipient')).toBe('not_authorized_transition');
    expect(outcome('progress', 'accepted', 'sender')).toBe('not_authorized_transition');
  });

  it('lets the standard A2A cancel stop any active task and answers task_not_cancelable otherwise', () => {
    for (const state of ['held', 'pending', 'accepted', 'input_required'] as const)
      expect(outcome('cancel', state, 'sender', 'any_active')).toBe('ok:cancelled');
    for (const state of ['completed', 'cancelled', 'failed', 'rejected'] as const)
      expect(outcome('cancel', state, 'sender', 'any_active')).toBe('task_not_cancelable');
    expect(outcome('cancel', 'accepted', 'recipient', 'any_active')).toBe('task_not_cancelable');
  });
});

describe('the party of a caller', () => {
  const task = { id: 'T1', sender_id: 'bob', recipient_id: 'frank', hidden_from_recipient: false };
  const reasonOf = (call: () => unknown): string | undefined => {
    try {
      call();
      return undefined;
    } catch (error) {
      return (error as RelayError).reason;
    }
  };

  it('is the side the caller is on, and refuses anyone else', () => {
    expect(partyOf(task, 'bob')).toBe('sender');
    expect(partyOf(task, 'frank')).toBe('recipient');
    expect(reasonOf(() => partyOf(task, 'carol'))).toBe('not_a_participant');
  });

  it('refuses the recipient of a task hidden from it (held for approval) as anyone else', () => {
    const held = { ...task, hidden_from_recipient: true };
    expect(partyOf(held, 'bob')).toBe('sender');
    expect(reasonOf(() => partyOf(held, 'frank'))).toBe('not_a_participant');
  });

  it("on an agent's endpoint, finds only the task between the caller and that agent", () => {
    expect(partyOf(task, 'bob', 'frank')).toBe('sender');
    expect(partyOf(task, 'frank', 'bob')).toBe('recipient');
    expect(reasonOf(() => partyOf(task, 'bob', 'carol'))).toBe('thread_not_found');
    expect(reasonOf(() => partyOf(task, 'bob', 'bob'))).toBe('thread_not_found');
    expect(reasonOf(() => partyOf(task, 'carol', 'frank'))).toBe('not_a_participant');
  });
});
