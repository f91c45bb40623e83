import { compilePathGlob, compileSenderPattern, MatchBudget, wildcardMatches } from './wildcard-match';

/** The regexes the rules were matched with before: the answers to keep (on inputs too small to backtrack far). */
function escape(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}
function regexPathMatches(glob: string, path: string): boolean {
  let source = '';
  for (let index = 0; index < glob.length; index++) {
    const char = glob[index];
    if (char === '*' && glob[index + 1] === '*') {
      const slash = glob[index + 2] === '/';
      source += slash ? '(?:.*/)?' : '.*';
      index += slash ? 2 : 1;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += escape(char);
  }
  return new RegExp(`^${source.replace(/^\\?\.?\//, '')}$`).test(path);
}
function regexSenderMatches(pattern: string, sender: string): boolean {
  return new RegExp(`^${escape(pattern).replace(/\*/g, '[^@]*')}$`).test(sender);
}

const unlimited = (): MatchBudget => new MatchBudget(Number.MAX_SAFE_INTEGER);
const pathMatch = (glob: string, path: string): boolean | null => wildcardMatches(compilePathGlob(glob), path, unlimited());

/** A small deterministic generator, so a failure names inputs that come back on the next run. */
function* strings(alphabet: string[], count: number, maxLength: number, seed: number): Generator<string> {
  let state = seed;
  const random = (below: number): number => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state % below;
  };
  for (let made = 0; made < count; made++) {
    let text = '';
    const length = random(maxLength + 1);
    for (let index = 0; index < length; index++) text += alphabet[random(alphabet.length)];
    yield text;
  }
}

describe('path globs', () => {
  it('answer as the regexes did: ** spans segments (also none), * and ? stay within one, the rest is literal', () => {
    const cases: Array<[string, string]> = [
      ['db/**', 'db/a/b.sql'],
      ['db/**', 'db/'],
      ['db/**', 'db'],
      ['**/prod.yaml', 'prod.yaml'],
      ['**/prod.yaml', 'k8s/env/prod.yaml'],
      ['**/prod.yaml', 'k8s/env/xprod.yaml'],
      ['src/*.ts', 'src/a/b.ts'],
      ['src/?.ts', 'src/a.ts'],
      ['src/?.ts', 'src//.ts'],
      ['./src/*.ts', 'src/a.ts'],
      ['/src/*.ts', 'src/a.ts'],
      ['a.b', 'axb'],
      ['a**b', 'a/x/y/b'],
      ['***', 'a/b'],
      ['**/db/**/migrations/**/*.sql', 'db/migrations/001.sql'],
      ['**/db/**/migrations/**/*.sql', 'apps/db/x/y/migrations/z/001.sql'],
      ['**/db/**/migrations/**/*.sql', 'apps/db/x/y/migrations/z/001.sq'],
      ['[a]+(b){c}|$^', '[a]+(b){c}|$^'],
      ['db/**/', 'db/'],
      ['db/**/', 'db/x'],
    ];
    for (const [glob, path] of cases) expect([glob, path, pathMatch(glob, path)]).toEqual([glob, path, regexPathMatches(glob, path)]);
  });

  it('answer as the regexes did on 20,000 generated pairs', () => {
    const globs = [...strings(['a', 'b', '/', '*', '*', '?', '.'], 400, 8, 7)];
    const paths = [...strings(['a', 'b', '/', '.'], 50, 10, 11)];
    for (const glob of globs)
      for (const path of paths) if (pathMatch(glob, path) !== regexPathMatches(glob, path)) throw new Error(`${glob} on ${path}: ${pathMatch(glob, path)}`);
  });

  it('read a crafted path once: 200 paths of 1024 characters in a bounded number of steps, well within a decision', () => {
    const glob = compilePathGlob('**/db/**/migrations/**/*.sql');
    const crafted = ('db/'.repeat(68) + 'migrations/'.repeat(68) + '/'.repeat(68) + 'x').slice(0, 1024);
    const budget = unlimited();
    for (let path = 0; path < 200; path++) expect(wildcardMatches(glob, crafted, budget)).toBe(false);
    // Each character moves each open place at most once and adds its few followers: no more than 4 steps a place.
    expect(budget.steps).toBeLessThanOrEqual(200 * 1024 * glob.kinds.length * 4);
    expect(budget.steps).toBeLessThan(5_000_000);
    // Twice the length is twice the steps (the regex took about eight times as long).
    const short = unlimited();
    const long = unlimited();
    wildcardMatches(glob, crafted.slice(0, 512), short);
    wildcardMatches(glob, crafted, long);
    expect(long.steps).toBeLessThanOrEqual(short.steps * 2.2);
  });

  it('gives up, answering null, when the budget is spent', () => {
    const budget = new MatchBudget(100);
    expect(wildcardMatches(compilePathGlob('**/*.sql'), 'a/'.repeat(200), budget)).toBeNull();
    expect(budget.exhausted).toBe(true);
    expect(wildcardMatches(compilePathGlob('a'), 'a', budget)).toBeNull();
  });

  it('** also spans a line break in a path (the regex stopped at one)', () => {
    expect(pathMatch('db/**', 'db/x\n/y.sql')).toBe(true);
  });
});

describe('sender patterns', () => {
  it('answer as the regexes did: * never crosses the @', () => {
    const patterns = [...strings(['a', 'b', '@', '*', '.', '-'], 300, 8, 5)];
    const senders = [...strings(['a', 'b', '@', '.', '-'], 60, 9, 3)];
    for (const pattern of patterns)
      for (const sender of senders) {
        const matched = wildcardMatches(compileSenderPattern(pattern), sender, unlimited());
        if (matched !== regexSenderMatches(pattern, sender)) throw new Error(`${pattern} on ${sender}: ${matched}`);
      }
  });

  it('read a crafted handle once', () => {
    const pattern = compileSenderPattern('*a*a*a*a*a*a*a*b@x');
    const budget = unlimited();
    expect(wildcardMatches(pattern, `${'a'.repeat(127)}@x`, budget)).toBe(false);
    expect(budget.steps).toBeLessThanOrEqual(130 * pattern.kinds.length * 4);
  });
});
