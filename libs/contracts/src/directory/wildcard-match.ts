/**
 * The path globs and sender patterns of hold and tool-prompt rules, matched without backtracking
 * (docs/decisions/0033-linear-glob-matching.md): a pattern is compiled once to a small automaton,
 * and a text is read once, left to right, keeping the set of places the pattern could be at. The
 * work is at most (text length + 1) × (pattern places), whatever the text, and every step is
 * counted against a `MatchBudget`.
 */

/** What one place of a compiled pattern does with the next character. */
type Place =
  | { kind: 'char'; code: number }
  /** `?`: one character other than the separator. */
  | { kind: 'one' }
  /** `*`: any run of characters other than the separator (or none). */
  | { kind: 'star' }
  /** `**` not followed by `/`: any run of characters. */
  | { kind: 'any' }
  /** `**\/`: nothing, or any run of characters that ends with `/` (entered here, read at the next place). */
  | { kind: 'dirs' }
  | { kind: 'dirsBody' };

export interface CompiledPattern {
  readonly places: readonly Place[];
  /** The character `*` and `?` never match (`/` in paths, `@` in senders). */
  readonly separator: number;
  /** For each place, the places reachable from it without reading a character (itself first). */
  readonly closures: readonly (readonly number[])[];
}

/** Counts the steps of the matches one decision makes; once spent, no match is tried any more. */
export class MatchBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  get steps(): number {
    return this.used;
  }

  get exhausted(): boolean {
    return this.used > this.limit;
  }

  /** Adds `count` steps; false once the budget is spent. */
  spend(count: number): boolean {
    this.used += count;
    return this.used <= this.limit;
  }
}

const SLASH = '/'.charCodeAt(0);
const AT = '@'.charCodeAt(0);

function closuresOf(places: readonly Place[]): number[][] {
  const closures: number[][] = [];
  for (let start = 0; start <= places.length; start++) {
    const reached: number[] = [];
    const pending = [start];
    while (pending.length > 0) {
      const index = pending.pop() as number;
      if (reached.includes(index)) continue;
      reached.push(index);
      const place = places[index];
      if (!place) continue;
      if (place.kind === 'star' || place.kind === 'any') pending.push(index + 1);
      if (place.kind === 'dirs') pending.push(index + 1, index + 2);
    }
    closures.push(reached);
  }
  return closures;
}

function compiled(places: Place[], separator: number): CompiledPattern {
  return { places, separator, closures: closuresOf(places) };
}

/** A path glob: `**\/` any run of whole segments (also none), `**` any run of characters, `*` within a segment, `?` one character; the rest literally; a leading `./` or `/` dropped. */
export function compilePathGlob(glob: string): CompiledPattern {
  const source = glob.startsWith('./') ? glob.slice(2) : glob.startsWith('/') ? glob.slice(1) : glob;
  const places: Place[] = [];
  for (let index = 0; index < source.length; index++) {
    const char = source[index];
    if (char === '*' && source[index + 1] === '*') {
      if (source[index + 2] === '/') {
        places.push({ kind: 'dirs' }, { kind: 'dirsBody' });
        index += 2;
      } else {
        places.push({ kind: 'any' });
        index += 1;
      }
    } else if (char === '*') places.push({ kind: 'star' });
    else if (char === '?') places.push({ kind: 'one' });
    else places.push({ kind: 'char', code: source.charCodeAt(index) });
  }
  return compiled(places, SLASH);
}

/** A sender pattern: `*` any run of characters other than `@` (or none), the rest literally. */
export function compileSenderPattern(pattern: string): CompiledPattern {
  const places: Place[] = [];
  for (let index = 0; index < pattern.length; index++)
    places.push(pattern[index] === '*' ? { kind: 'star' } : { kind: 'char', code: pattern.charCodeAt(index) });
  return compiled(places, AT);
}

/**
 * Whether the whole of `text` matches `pattern`, or null when the budget ran out first (the caller
 * decides what an unchecked match means). Reads `text` once, keeping the set of places.
 */
export function wildcardMatches(pattern: CompiledPattern, text: string, budget: MatchBudget): boolean | null {
  const { places, closures, separator } = pattern;
  const end = places.length;
  const seen = new Int32Array(end + 1).fill(-1);
  let current = new Int32Array(end + 1);
  let next = new Int32Array(end + 1);
  let count = 0;
  let nextCount = 0;
  for (const index of closures[0]) {
    seen[index] = 0;
    current[count++] = index;
  }
  const reach = (target: number, mark: number): number => {
    let added = 0;
    for (const reached of closures[target]) {
      if (seen[reached] === mark) continue;
      seen[reached] = mark;
      next[added + nextCount] = reached;
      added++;
    }
    return added;
  };
  for (let position = 0; position < text.length && count > 0; position++) {
    const code = text.charCodeAt(position);
    const mark = position + 1;
    nextCount = 0;
    let steps = count;
    for (let slot = 0; slot < count; slot++) {
      const index = current[slot];
      const place = places[index];
      if (!place) continue;
      let target = -1;
      if (place.kind === 'char') target = code === place.code ? index + 1 : -1;
      else if (place.kind === 'one') target = code !== separator ? index + 1 : -1;
      else if (place.kind === 'star') target = code !== separator ? index : -1;
      else if (place.kind === 'any') target = index;
      else if (place.kind === 'dirsBody') {
        target = index;
        if (code === SLASH) {
          steps += closures[index + 1].length;
          nextCount += reach(index + 1, mark);
        }
      }
      if (target < 0) continue;
      steps += closures[target].length;
      nextCount += reach(target, mark);
    }
    if (!budget.spend(steps)) return null;
    [current, next] = [next, current];
    count = nextCount;
  }
  for (let slot = 0; slot < count; slot++) if (current[slot] === end) return true;
  return false;
}
