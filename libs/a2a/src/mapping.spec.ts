import { TaskState as SdkTaskState } from '@a2a-js/sdk';
import { RelayError, TASK_STATES, type TaskState } from '@app/contracts';
import { A2A_TASK_STATES, fromWireState, relayStateOfUpstream, toWireRole, toWireState } from './mapping';

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

  it('reads the relay spellings and refuses auth-required by its number too', () => {
    expect(fromWireState('input_required', 'status')).toBe('input_required');
    expect(fromWireState('cancelled', 'status')).toBe('cancelled');
    expect(fromWireState(0, 'status')).toBeUndefined();
    expect(fromWireState('unknown', 'status')).toBeUndefined();
    expect(() => fromWireState(8, 'status')).toThrow(/not a task state/);
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

describe('the one state table', () => {
  it('numbers each A2A state as the v1.0 enum of the official SDK does, and names every SDK state but UNRECOGNIZED', () => {
    for (const row of A2A_TASK_STATES) expect(SdkTaskState[row['1.0'] as keyof typeof SdkTaskState]).toBe(row.number);
    const sdkStates = Object.values(SdkTaskState).filter((value) => typeof value === 'number' && value >= 0);
    expect(A2A_TASK_STATES.map((row) => row.number).sort()).toEqual([...sdkStates].sort());
  });

  it('shows each relay state as exactly one A2A state', () => {
    const shown = A2A_TASK_STATES.flatMap((row) => (row.shows === null ? [] : [row.shows]));
    expect([...shown].sort()).toEqual([...TASK_STATES].sort());
  });

  it.each([
    [SdkTaskState.TASK_STATE_UNSPECIFIED, null],
    [SdkTaskState.TASK_STATE_SUBMITTED, null],
    [SdkTaskState.TASK_STATE_WORKING, 'accepted'],
    [SdkTaskState.TASK_STATE_INPUT_REQUIRED, 'input_required'],
    [SdkTaskState.TASK_STATE_AUTH_REQUIRED, 'input_required'],
    [SdkTaskState.TASK_STATE_COMPLETED, 'completed'],
    [SdkTaskState.TASK_STATE_FAILED, 'failed'],
    [SdkTaskState.TASK_STATE_CANCELED, 'failed'],
    [SdkTaskState.TASK_STATE_REJECTED, 'rejected'],
    [undefined, null],
    [99, null],
  ])('an upstream task in state %p makes the relay task %p', (state, relayState) => {
    expect(relayStateOfUpstream(state)).toBe(relayState);
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
