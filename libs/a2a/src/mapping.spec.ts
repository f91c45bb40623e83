import { RelayError, TASK_STATES, type TaskState } from '@app/contracts';
import { fromWireState, toWireRole, toWireState } from './mapping';

describe('state mapping (docs/state-machine.md#states)', () => {
  it.each([
    ['pending', 'submitted', 'TASK_STATE_SUBMITTED'],
    ['accepted', 'working', 'TASK_STATE_WORKING'],
    ['input_required', 'input-required', 'TASK_STATE_INPUT_REQUIRED'],
    ['completed', 'completed', 'TASK_STATE_COMPLETED'],
    ['cancelled', 'canceled', 'TASK_STATE_CANCELED'],
    ['failed', 'failed', 'TASK_STATE_FAILED'],
    ['rejected', 'rejected', 'TASK_STATE_REJECTED'],
  ])('%s is %s in v0.3 and %s in v1.0, and reads back from both', (state, v03, v10) => {
    expect(toWireState(state as TaskState, '0.3')).toBe(v03);
    expect(toWireState(state as TaskState, '1.0')).toBe(v10);
    expect(fromWireState(v03, 'status')).toBe(state);
    expect(fromWireState(v10, 'status')).toBe(state);
  });

  it('covers every internal state; only the relay enters held (auth-required)', () => {
    for (const state of TASK_STATES.filter((entry) => entry !== 'held')) expect(fromWireState(toWireState(state, '1.0'), 'status')).toBe(state);
    expect(toWireState('held', '0.3')).toBe('auth-required');
    expect(toWireState('held', '1.0')).toBe('TASK_STATE_AUTH_REQUIRED');
    expect(() => fromWireState('auth-required', 'status')).toThrow(/not a task state/);
  });

  it('reads enum numbers and treats unspecified as no state', () => {
    expect(fromWireState(2, 'status')).toBe('accepted');
    expect(fromWireState(5, 'status')).toBe('cancelled');
    expect(fromWireState('TASK_STATE_UNSPECIFIED', 'status')).toBeUndefined();
    expect(fromWireState(undefined, 'status')).toBeUndefined();
  });

  it.each(['TASK_STATE_AUTH_REQUIRED', 'done', 42, true])('rejects %p with invalid_params naming the field', (value) => {
    try {
      fromWireState(value, 'status.state');
      throw new Error('expected a throw');
    } catch (error) {
      expect(error).toBeInstanceOf(RelayError);
      expect(error).toMatchObject({ reason: 'invalid_params', data: { field: 'status.state' } });
    }
  });
});

describe('role mapping', () => {
  it('renders the sender as user and the recipient as agent', () => {
    expect(toWireRole('sender', '0.3')).toBe('user');
    expect(toWireRole('recipient', '0.3')).toBe('agent');
    expect(toWireRole('sender', '1.0')).toBe('ROLE_USER');
    expect(toWireRole('recipient', '1.0')).toBe('ROLE_AGENT');
  });
});
