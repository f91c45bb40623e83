import { TASK_STATES, TERMINAL_STATES } from './task-vocabulary';
import { decideOpenHandoffs, decideStoredBytes, OPEN_HANDOFF_STATES, orgOfHandle } from './open-handoff-rules';

describe('open-handoff rules', () => {
  it('count every state a handoff can still leave, and no terminal one', () => {
    expect([...OPEN_HANDOFF_STATES].sort()).toEqual(TASK_STATES.filter((state) => !TERMINAL_STATES.includes(state)).sort());
  });

  it('refuse a create of the sender’s org at its quota, naming the org, the quota and the limit', () => {
    expect(decideOpenHandoffs('a@payments', 3, 3)).toEqual({ org: 'payments', quota: 'open_handoffs', limit: 3 });
    expect(decideOpenHandoffs('a@payments', 0, 0)).toEqual({ org: 'payments', quota: 'open_handoffs', limit: 0 });
  });

  it('let a create below the quota, or with no quota, go on', () => {
    expect(decideOpenHandoffs('a@payments', 3, 2)).toBeNull();
    expect(decideOpenHandoffs('a@payments', null, 1_000)).toBeNull();
    expect(decideOpenHandoffs('a@payments', undefined, 1_000)).toBeNull();
  });

  it('name the org after the @ of a handle', () => {
    expect(orgOfHandle('frank@web')).toBe('web');
    expect(orgOfHandle('ana@pay.ments')).toBe('pay.ments');
  });

  it('refuse a write that would take the org past its stored-bytes quota, naming the org, the quota and the limit', () => {
    expect(decideStoredBytes('payments', 100, 60, 41)).toEqual({ org: 'payments', quota: 'stored_bytes', limit: 100 });
    expect(decideStoredBytes('payments', 0, 0, 1)).toEqual({ org: 'payments', quota: 'stored_bytes', limit: 0 });
  });

  it('let a write that reaches the stored-bytes quota exactly, frees bytes, adds none, or meets no quota go on', () => {
    expect(decideStoredBytes('payments', 100, 60, 40)).toBeNull();
    expect(decideStoredBytes('payments', 100, 150, 0)).toBeNull();
    expect(decideStoredBytes('payments', 100, 150, -20)).toBeNull();
    expect(decideStoredBytes('payments', null, 10_000, 10_000)).toBeNull();
  });
});
