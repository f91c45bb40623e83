import { decideHold } from '../directory/hold-rules';
import { chainLimitsWith, chainPlace, decideChain, DEFAULT_CHAIN_LIMITS, parseCyclePairs, type ChainFacts, type ParentChain } from './chain-rules';

const now = new Date('2026-05-01T12:00:00Z');
const quietPair: ChainFacts['pairLastMinute'] = { count: 0, oldest: null };

/** The parent at the end of a chain whose tasks were sent by `senders` in order, the last one to `recipient`. */
function parentOf(senders: string[], recipient: string, overrides: Partial<ParentChain> = {}): ParentChain {
  return {
    senders,
    recipient,
    depth: senders.length - 1,
    rootTaskId: 'ROOT',
    rootCreatedAt: new Date(now.getTime() - 60_000),
    treeSize: senders.length,
    ...overrides,
  };
}

function facts(parent: ParentChain | null, pair = quietPair): ChainFacts {
  return { parent, pairLastMinute: pair };
}

describe('chain rules', () => {
  it('place a root at depth 0 and a child one below its parent, its path the senders then the recipient', () => {
    expect(chainPlace({ sender: 'a@x', recipient: 'b@x', now }, null)).toEqual({ depth: 0, path: ['a@x', 'b@x'] });
    expect(chainPlace({ sender: 'b@x', recipient: 'c@x', now }, parentOf(['a@x'], 'b@x'))).toEqual({ depth: 1, path: ['a@x', 'b@x', 'c@x'] });
    // The parent's sender asking a second helper does not stand twice on the path.
    expect(chainPlace({ sender: 'a@x', recipient: 'd@x', now }, parentOf(['a@x'], 'b@x'))).toEqual({ depth: 1, path: ['a@x', 'd@x'] });
  });

  it('let a chain within every bound pass', () => {
    expect(decideChain(DEFAULT_CHAIN_LIMITS, { sender: 'b@x', recipient: 'c@x', now }, facts(parentOf(['a@x'], 'b@x')))).toBeNull();
    expect(decideChain(DEFAULT_CHAIN_LIMITS, { sender: 'a@x', recipient: 'b@x', now }, facts(null))).toBeNull();
  });

  it('refuse a handoff back to an agent on the path (A → B → A), unless the pair is allowed', () => {
    const refusal = decideChain(DEFAULT_CHAIN_LIMITS, { sender: 'b@x', recipient: 'a@x', now }, facts(parentOf(['a@x'], 'b@x')));
    expect(refusal).toEqual(expect.objectContaining({ reason: 'chain_cycle', path: ['a@x', 'b@x', 'a@x'] }));
    const allowed = { ...DEFAULT_CHAIN_LIMITS, cycleAllowedPairs: parseCyclePairs('a@x:b@x') };
    expect(decideChain(allowed, { sender: 'b@x', recipient: 'a@x', now }, facts(parentOf(['a@x'], 'b@x')))).toBeNull();
    // Another pair's allowance does not cover it, and cycles may be let through relay-wide.
    expect(
      decideChain(
        { ...DEFAULT_CHAIN_LIMITS, cycleAllowedPairs: parseCyclePairs('a@x:c@x') },
        { sender: 'b@x', recipient: 'a@x', now },
        facts(parentOf(['a@x'], 'b@x')),
      ),
    ).not.toBeNull();
    expect(decideChain({ ...DEFAULT_CHAIN_LIMITS, refuseCycles: false }, { sender: 'b@x', recipient: 'a@x', now }, facts(parentOf(['a@x'], 'b@x')))).toBeNull();
  });

  it('refuse depth 9 under the default of 8, and pass depth 8', () => {
    const senders = ['a0@x', 'a1@x', 'a2@x', 'a3@x', 'a4@x', 'a5@x', 'a6@x', 'a7@x', 'a8@x'];
    const atEight = decideChain(DEFAULT_CHAIN_LIMITS, { sender: 'a8@x', recipient: 'a9@x', now }, facts(parentOf(senders.slice(0, 8), 'a8@x')));
    expect(atEight).toBeNull();
    const atNine = decideChain(DEFAULT_CHAIN_LIMITS, { sender: 'a9@x', recipient: 'a10@x', now }, facts(parentOf([...senders], 'a9@x')));
    expect(atNine).toEqual(expect.objectContaining({ reason: 'chain_depth_exceeded', limit: 8, limitName: 'max_depth' }));
    expect(atNine?.path).toEqual([...senders, 'a9@x', 'a10@x']);
  });

  it("refuse a handoff once its chain's tree holds its budget or its root is older than the age limit", () => {
    const limits = { ...DEFAULT_CHAIN_LIMITS, budget: 3 };
    const full = decideChain(limits, { sender: 'b@x', recipient: 'c@x', now }, facts(parentOf(['a@x'], 'b@x', { treeSize: 3 })));
    expect(full).toEqual(expect.objectContaining({ reason: 'chain_budget_exhausted', limit: 3, limitName: 'budget' }));
    expect(decideChain(limits, { sender: 'b@x', recipient: 'c@x', now }, facts(parentOf(['a@x'], 'b@x', { treeSize: 2 })))).toBeNull();
    const old = parentOf(['a@x'], 'b@x', { rootCreatedAt: new Date(now.getTime() - (DEFAULT_CHAIN_LIMITS.maxAgeMinutes + 1) * 60_000) });
    expect(decideChain(DEFAULT_CHAIN_LIMITS, { sender: 'b@x', recipient: 'c@x', now }, facts(old))).toEqual(
      expect.objectContaining({ reason: 'chain_budget_exhausted', limitName: 'max_age_minutes', limit: DEFAULT_CHAIN_LIMITS.maxAgeMinutes }),
    );
  });

  it('refuse a pair past its rate, linked or not, saying when the oldest handoff of the minute leaves it', () => {
    const busy = { count: DEFAULT_CHAIN_LIMITS.pairPerMinute, oldest: new Date(now.getTime() - 45_000) };
    const refusal = decideChain(DEFAULT_CHAIN_LIMITS, { sender: 'a@x', recipient: 'b@x', now }, facts(null, busy));
    expect(refusal).toEqual(expect.objectContaining({ reason: 'pair_rate_limited', limit: 30, retryAfterSeconds: 15, path: ['a@x', 'b@x'] }));
    expect(decideChain(DEFAULT_CHAIN_LIMITS, { sender: 'a@x', recipient: 'b@x', now }, facts(null, { ...busy, count: 29 }))).toBeNull();
  });

  it('read allowed pairs and refuse what is not a pair of handles', () => {
    expect(parseCyclePairs(' A@x:b@x , c@y:d@y ')).toEqual([
      ['a@x', 'b@x'],
      ['c@y', 'd@y'],
    ]);
    expect(parseCyclePairs('')).toEqual([]);
    expect(() => parseCyclePairs('a@x')).toThrow('"a@x" is not a pair of handles');
    expect(() => parseCyclePairs('a@x:b@x:c@x')).toThrow('is not a pair of handles');
  });

  it('hold a handoff to the relay, then its recipient org, then its recipient policy, each stated field replacing the one below', () => {
    const relay = { ...DEFAULT_CHAIN_LIMITS, cycleAllowedPairs: [['a@x', 'b@x'] as const] };
    const org = { max_depth: 2, pair_per_minute: 5, cycle_allowed_pairs: ['c@x:d@x'] };
    const policy = { max_depth: 4, refuse_cycles: false };
    expect(chainLimitsWith(relay)).toBe(relay);
    expect(chainLimitsWith(relay, undefined, undefined)).toBe(relay);
    expect(chainLimitsWith(relay, org)).toEqual({
      ...relay,
      maxDepth: 2,
      pairPerMinute: 5,
      cycleAllowedPairs: [
        ['a@x', 'b@x'],
        ['c@x', 'd@x'],
      ],
    });
    // The recipient's policy outranks its org's: its depth wins, the org's pair rate stays, the relay's budget and age stay.
    expect(chainLimitsWith(relay, org, policy)).toEqual({
      maxDepth: 4,
      budget: relay.budget,
      maxAgeMinutes: relay.maxAgeMinutes,
      pairPerMinute: 5,
      refuseCycles: false,
      cycleAllowedPairs: [
        ['a@x', 'b@x'],
        ['c@x', 'd@x'],
      ],
    });
    // An org that states nothing leaves the policy over the relay alone; a policy that states nothing leaves the org's.
    expect(chainLimitsWith(relay, {}, policy)).toEqual(chainLimitsWith(relay, policy));
    expect(chainLimitsWith(relay, org, {})).toEqual(chainLimitsWith(relay, org));
    // A lower bound of a higher level wins too: the order decides, not the size.
    expect(chainLimitsWith(relay, { max_depth: 6 }, { max_depth: 1 }).maxDepth).toBe(1);
    expect(chainLimitsWith(relay, { max_depth: 1 }, { max_depth: 6 }).maxDepth).toBe(6);
  });

  it('let a hold rule name a chain depth', () => {
    const base = { sender: 'b@x', recipient: 'c@x', intent: 'inform' as const, artifacts: [] };
    const rules = [{ name: 'deep chains', min_depth: 4 }];
    expect(decideHold(rules, { ...base, depth: 4 })).toEqual(expect.objectContaining({ rule: 'deep chains' }));
    expect(decideHold(rules, { ...base, depth: 3 })).toBeNull();
    expect(decideHold(rules, base)).toBeNull();
  });
});
