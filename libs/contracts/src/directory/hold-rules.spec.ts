import {
  decideHold,
  decideToolPrompts,
  diffPaths,
  HOLD_RULE_LIMITS,
  HOLD_RULES_SCHEMA,
  holdRulesProblem,
  pathMatches,
  touchedPaths,
  type HoldCandidate,
  type HoldRule,
} from './hold-rules';

const base: HoldCandidate = { sender: 'bob@partner', recipient: 'ops@acme', intent: 'inform', artifacts: [] };
const diff = ['--- a/db/migrations/001.sql', '+++ b/db/migrations/001.sql', '@@ -1 +1 @@', '-a', '+b', '--- /dev/null', '+++ b/deploy/prod.yaml'].join('\n');

describe('hold rules', () => {
  it('holds propose_action from another org, not from a teammate', () => {
    const rules: HoldRule[] = [{ name: 'external proposals', outside_org: true, intents: ['propose_action'] }];
    expect(decideHold(rules, { ...base, intent: 'propose_action' })).toEqual({
      rule: 'external proposals',
      reason: `Held for approval by ops@acme's trust policy (rule "external proposals")`,
      expiresAfterMinutes: 24 * 60,
      fourEyes: false,
    });
    expect(decideHold(rules, { ...base, intent: 'inform' })).toBeNull();
    expect(decideHold(rules, { ...base, sender: 'alice@acme', intent: 'propose_action' })).toBeNull();
  });

  it('matches senders by handle, *@org and patterns with *', () => {
    const rule = (senders: string[]): HoldRule[] => [{ name: 'r', senders }];
    expect(decideHold(rule(['bob@partner']), base)).not.toBeNull();
    expect(decideHold(rule(['*@partner']), base)).not.toBeNull();
    expect(decideHold(rule(['b*@part*']), base)).not.toBeNull();
    expect(decideHold(rule(['ci-*@partner']), base)).toBeNull();
    // A wildcard never crosses the @.
    expect(decideHold(rule(['*']), base)).toBeNull();
    expect(decideHold(rule(['*@*']), base)).not.toBeNull();
  });

  it("matches artifact kinds, and a file_diff's paths (its path and the files its diff names) by glob", () => {
    const withDiff: HoldCandidate = { ...base, artifacts: [{ type: 'file_diff', fields: { path: 'README.md', diff } }] };
    expect(decideHold([{ name: 'diffs', artifact_kinds: ['file_diff'] }], withDiff)).not.toBeNull();
    expect(decideHold([{ name: 'tests', artifact_kinds: ['test_command'] }], withDiff)).toBeNull();
    expect(touchedPaths(withDiff).sort()).toEqual(['README.md', 'db/migrations/001.sql', 'deploy/prod.yaml']);
    expect(decideHold([{ name: 'migrations', paths: ['db/migrations/**'] }], withDiff)).not.toBeNull();
    expect(decideHold([{ name: 'prod', paths: ['deploy/*.yaml'] }], withDiff)).not.toBeNull();
    expect(decideHold([{ name: 'src', paths: ['src/**'] }], withDiff)).toBeNull();
    // A proposed action's target files count too.
    expect(decideHold([{ name: 'prod', paths: ['**/prod.*'] }], { ...base, proposedAction: { target_files: ['k8s/env/prod.tf'] } })).not.toBeNull();
  });

  it('a rule holds only when every condition it states holds; the first matching rule decides', () => {
    const rules: HoldRule[] = [
      { name: 'external diffs to db', outside_org: true, artifact_kinds: ['file_diff'], paths: ['db/**'], four_eyes: true, expires_after_minutes: 60 },
      { name: 'all proposals', intents: ['propose_action'] },
    ];
    const candidate: HoldCandidate = { ...base, intent: 'propose_action', artifacts: [{ type: 'file_diff', fields: { path: 'db/x.sql', diff: '+x' } }] };
    expect(decideHold(rules, candidate)).toEqual(expect.objectContaining({ rule: 'external diffs to db', fourEyes: true, expiresAfterMinutes: 60 }));
    expect(decideHold(rules, { ...candidate, sender: 'alice@acme' })).toEqual(expect.objectContaining({ rule: 'all proposals' }));
  });

  it('globs: ** spans segments (also none), * and ? stay within one', () => {
    expect(pathMatches('db/**', 'db/a/b.sql')).toBe(true);
    expect(pathMatches('**/prod.yaml', 'prod.yaml')).toBe(true);
    expect(pathMatches('src/*.ts', 'src/a/b.ts')).toBe(false);
    expect(pathMatches('src/?.ts', 'src/a.ts')).toBe(true);
    expect(pathMatches('./src/*.ts', 'src/a.ts')).toBe(true);
    expect(pathMatches('a.b', 'axb')).toBe(false);
    expect(diffPaths('--- a/x\n+++ b/y\n')).toEqual(['x', 'y']);
  });

  it('the schema checks what an admin writes and normalizes sender patterns', () => {
    const parsed = HOLD_RULES_SCHEMA.parse([{ name: ' prod ', senders: [' CI-*@Acme '], intents: ['propose_action'] }]);
    expect(parsed).toEqual([{ name: 'prod', senders: ['ci-*@acme'], intents: ['propose_action'] }]);
    expect(HOLD_RULES_SCHEMA.safeParse([{ name: 'x', intents: ['deploy'] }]).success).toBe(false);
    expect(HOLD_RULES_SCHEMA.safeParse([{ name: 'x', sender: ['a@b'] }]).success).toBe(false);
    expect(HOLD_RULES_SCHEMA.safeParse([{ name: 'x', senders: ['not a handle'] }]).success).toBe(false);
    expect(HOLD_RULES_SCHEMA.safeParse([{ name: 'x', expires_after_minutes: 0 }]).success).toBe(false);
    expect(HOLD_RULES_SCHEMA.safeParse([{ name: 'x', artifact_kinds: [] }]).success).toBe(false);
  });
});

describe('holdRulesProblem', () => {
  it('names the place of the first problem, and a rule name used twice', () => {
    expect(holdRulesProblem([{ name: 'a', intents: ['propose_action'] }])).toBeNull();
    expect(holdRulesProblem([{ name: 'a', intents: ['nope'] }])).toMatch(/^\[0\]\.intents\[0\]: /);
    expect(holdRulesProblem([{ name: 'a' }, { name: 'b', senders: ['x'] }])).toMatch(/^\[1\]\.senders\[0\]: a sender is a handle/);
    expect(holdRulesProblem([{ name: 'a' }, { name: ' a ' }])).toBe('[1].name: another rule is already named "a"');
    expect(holdRulesProblem({ name: 'a' })).toMatch(/^: /);
  });

  it('names the wildcard caps of path globs and sender patterns', () => {
    expect(holdRulesProblem([{ name: 'a', paths: ['*/'.repeat(16) + 'x'] }])).toBeNull();
    expect(holdRulesProblem([{ name: 'a', paths: ['**/'.repeat(16) + '?'] }])).toBe('[0].paths[0]: a path glob has at most 16 wildcards (*, ** or ?)');
    expect(holdRulesProblem([{ name: 'a', senders: ['*a*a*a*a*a*a*a*@x'] }])).toBeNull();
    expect(holdRulesProblem([{ name: 'a', senders: ['*a*a*a*a*a*a*a*@*'] }])).toBe('[0].senders[0]: a sender pattern has at most 8 wildcards (*)');
    expect(holdRulesProblem([{ name: 'a', paths: ['x'.repeat(HOLD_RULE_LIMITS.pathPatternChars + 1)] }])).toMatch(/^\[0\]\.paths\[0\]: /);
  });
});

describe('a decision past its limits', () => {
  const rules: HoldRule[] = [{ name: 'migrations', paths: ['**/db/**/migrations/**/*.sql'] }];
  const targets = (paths: string[]): HoldCandidate => ({ ...base, intent: 'propose_action', proposedAction: { target_files: paths } });

  it('checks 200 crafted paths of 1024 characters and answers as the globs say', () => {
    const crafted = Array.from({ length: 200 }, (_, index) => `${index}/${'db/'.repeat(68)}${'migrations/'.repeat(68)}${'/'.repeat(60)}x`.slice(0, 1024));
    expect(decideHold(rules, targets(crafted))).toBeNull();
    expect(decideHold(rules, targets([...crafted.slice(1), 'db/migrations/1.sql']))).toEqual(expect.objectContaining({ rule: 'migrations' }));
  });

  it('holds (and gives tool prompts to people) what it cannot check: too many paths, a path too long, a spent budget', () => {
    const many = Array.from({ length: HOLD_RULE_LIMITS.pathsPerHandoff + 1 }, (_, index) => `src/${index}.ts`);
    expect(decideHold(rules, targets(many))).toEqual(expect.objectContaining({ rule: 'migrations' }));
    expect(decideToolPrompts(rules, targets(many))).toEqual({ rule: 'migrations', fourEyes: false });
    expect(decideHold(rules, targets(['src/a.ts', 'x'.repeat(HOLD_RULE_LIMITS.pathChars + 1)]))).toEqual(expect.objectContaining({ rule: 'migrations' }));
    expect(decideHold(rules, targets(many.slice(1)))).toBeNull();
    // 100 globs of 16 wildcards against 500 long paths: more steps than one decision takes.
    const heavy: HoldRule[] = [{ name: 'heavy', paths: Array.from({ length: 100 }, (_, index) => `${'**/a'.repeat(15)}/*.${index}`) }];
    const long = Array.from({ length: HOLD_RULE_LIMITS.pathsPerHandoff }, (_, index) => `${'a/'.repeat(400)}${index}.ts`);
    expect(decideHold(heavy, targets(long))).toEqual(expect.objectContaining({ rule: 'heavy' }));
  });
});
