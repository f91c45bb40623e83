import { DestinationBreakers } from './destination-breakers';

describe('DestinationBreakers', () => {
  let now: number;
  let breakers: DestinationBreakers;

  beforeEach(() => {
    now = 1_000_000;
    breakers = new DestinationBreakers({ failures: 3, openMs: 1000, maxOpenMs: 3000 }, () => now);
  });

  it('opens after the threshold of consecutive failures, and an answer in between starts the count again', () => {
    expect(breakers.record('a:80', 'unreachable')).toBeNull();
    expect(breakers.record('a:80', 'unreachable')).toBeNull();
    expect(breakers.record('a:80', 'answered')).toBeNull();
    expect(breakers.record('a:80', 'unreachable')).toBeNull();
    expect(breakers.record('a:80', 'unreachable')).toBeNull();
    expect(breakers.record('a:80', 'unreachable')).toEqual({ destination: 'a:80', from: 'closed', to: 'open', openForMs: 1000, consecutiveFailures: 3 });
    expect(breakers.admission()).toEqual({ held: new Map([['a:80', 1000]]), probing: new Set(), transitions: [] });
    expect(breakers.counts()).toEqual({ open: 1, half_open: 0 });
    expect(breakers.stateOf('b:80')).toBe('closed');
  });

  it('lets one probe through after the window; a failed probe doubles the window up to the cap, an answer closes it', () => {
    for (let attempt = 0; attempt < 3; attempt++) breakers.record('a:80', 'unreachable');
    now += 1000;
    const admitted = breakers.admission();
    expect(admitted.probing).toEqual(new Set(['a:80']));
    expect(admitted.transitions).toMatchObject([{ from: 'open', to: 'half_open' }]);
    expect(breakers.record('a:80', 'unreachable')).toMatchObject({ from: 'half_open', to: 'open', openForMs: 2000 });
    now += 2000;
    breakers.admission();
    expect(breakers.record('a:80', 'unreachable')).toMatchObject({ to: 'open', openForMs: 3000 });
    now += 3000;
    breakers.admission();
    expect(breakers.record('a:80', 'unreachable')).toMatchObject({ to: 'open', openForMs: 3000 });
    now += 3000;
    breakers.admission();
    expect(breakers.record('a:80', 'answered')).toEqual({ destination: 'a:80', from: 'half_open', to: 'closed', openForMs: null, consecutiveFailures: 0 });
    expect(breakers.counts()).toEqual({ open: 0, half_open: 0 });
  });

  it('ignores failures of attempts still in flight when it opened', () => {
    for (let attempt = 0; attempt < 3; attempt++) breakers.record('a:80', 'unreachable');
    expect(breakers.record('a:80', 'unreachable')).toBeNull();
    expect(breakers.admission().held.get('a:80')).toBe(1000);
  });
});
