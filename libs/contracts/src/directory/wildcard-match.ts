/**
 * The path globs and sender patterns of hold and tool-prompt rules, matched without backtracking
 * (docs/decisions/0033-linear-glob-matching.md): a pattern is compiled once to a small automaton,
 * and a text is read once, left to right, keeping the set of places the pattern could be at. The
 * work grows with the text's length times the pattern's size, whatever the text, and every step is
 * counted against a `MatchBudget`.
 */

/** What one place of a compiled pattern does with the next character. */
const Kind = {
  Char: 0,
  /** `?`: one character other than the separator. */
  One: 1,
  /** `*`: any run of characters other than the separator (or none). */
  Star: 2,
  /** `**` not followed by `/`: any run of characters. */
  Any: 3,
  /** `**\/`: nothing, or any run of characters that ends with `/`; entered here, read at the next place (`DirsBody`). */
  Dirs: 4,
  DirsBody: 5,
} as const;
type Kind = (typeof Kind)[keyof typeof Kind];

export interface CompiledPattern {
  /** The kind of each place, and the character of a `Char` place. */
  readonly kinds: Uint8Array;
  readonly codes: Int32Array;
  /** The character `*` and `?` never match (`/` in paths, `@` in senders). */
  readonly separator: number;
  /** The places reachable from place `i` without reading a character (itself first): `closure[closureStart[i] .. closureStart[i + 1])`. */
  readonly closureStart: Int32Array;
  readonly closure: Int32Array;
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

function compiled(kinds: Kind[], codes: number[], separator: number): CompiledPattern {
  const starts = [0];
  const items: number[] = [];
  for (let start = 0; start <= kinds.length; start++) {
    const reached: number[] = [];
    const pending = [start];
    while (pending.length > 0) {
      const index = pending.shift() as number;
      if (reached.includes(index)) continue;
      reached.push(index);
      const kind = kinds[index];
      if (kind === Kind.Star || kind === Kind.Any) pending.push(index + 1);
      if (kind === Kind.Dirs) pending.push(index + 1, index + 2);
    }
    items.push(...reached);
    starts.push(items.length);
  }
  return { kinds: Uint8Array.from(kinds), codes: Int32Array.from(codes), separator, closureStart: Int32Array.from(starts), closure: Int32Array.from(items) };
}

/** A path glob: `**\/` any run of whole segments (also none), `**` any run of characters, `*` within a segment, `?` one character; the rest literally; a leading `./` or `/` dropped. */
export function compilePathGlob(glob: string): CompiledPattern {
  const source = glob.startsWith('./') ? glob.slice(2) : glob.startsWith('/') ? glob.slice(1) : glob;
  const kinds: Kind[] = [];
  const codes: number[] = [];
  const add = (kind: Kind, code = -1): void => {
    kinds.push(kind);
    codes.push(code);
  };
  for (let index = 0; index < source.length; index++) {
    const char = source[index];
    if (char === '*' && source[index + 1] === '*') {
      if (source[index + 2] === '/') {
        add(Kind.Dirs);
        add(Kind.DirsBody);
        index += 2;
      } else {
        add(Kind.Any);
        index += 1;
      }
    } else if (char === '*') add(Kind.Star);
    else if (char === '?') add(Kind.One);
    else add(Kind.Char, source.charCodeAt(index));
  }
  return compiled(kinds, codes, SLASH);
}

/** A sender pattern: `*` any run of characters other than `@` (or none), the rest literally. */
export function compileSenderPattern(pattern: string): CompiledPattern {
  const kinds: Kind[] = [];
  const codes: number[] = [];
  for (let index = 0; index < pattern.length; index++) {
    kinds.push(pattern[index] === '*' ? Kind.Star : Kind.Char);
    codes.push(pattern[index] === '*' ? -1 : pattern.charCodeAt(index));
  }
  return compiled(kinds, codes, AT);
}

/**
 * Whether the whole of `text` matches `pattern`, or null when the budget ran out first (the caller
 * decides what an unchecked match means). Reads `text` once, keeping the set of places it could
 * be at: a step is one place moved on one character, or one place it reaches.
 */
export function wildcardMatches(pattern: CompiledPattern, text: string, budget: MatchBudget): boolean | null {
  const { kinds, codes, separator, closureStart, closure } = pattern;
  const end = kinds.length;
  /** The character position at which a place was last added, so a set holds each place once. */
  const addedAt = new Int32Array(end + 1).fill(-1);
  let current = new Int32Array(end + 1);
  let next = new Int32Array(end + 1);
  let count = 0;
  for (let item = closureStart[0]; item < closureStart[1]; item++) {
    addedAt[closure[item]] = 0;
    current[count++] = closure[item];
  }
  for (let position = 0; position < text.length && count > 0; position++) {
    const code = text.charCodeAt(position);
    const mark = position + 1;
    let nextCount = 0;
    let steps = count;
    for (let slot = 0; slot < count; slot++) {
      const index = current[slot];
      let first = -1;
      let second = -1;
      switch (kinds[index]) {
        case Kind.Char:
          if (code === codes[index]) first = index + 1;
          break;
        case Kind.One:
          if (code !== separator) first = index + 1;
          break;
        case Kind.Star:
          if (code !== separator) first = index;
          break;
        case Kind.Any:
          first = index;
          break;
        case Kind.DirsBody:
          first = index;
          if (code === SLASH) second = index + 1;
          break;
      }
      // The place moves to `first`, and a `**\/` that reads its `/` also to `second`; each adds what it reaches.
      for (let target = first; target >= 0; target = target === first ? second : -1) {
        for (let item = closureStart[target]; item < closureStart[target + 1]; item++) {
          steps++;
          const reached = closure[item];
          if (addedAt[reached] === mark) continue;
          addedAt[reached] = mark;
          next[nextCount++] = reached;
        }
      }
    }
    if (!budget.spend(steps)) return null;
    [current, next] = [next, current];
    count = nextCount;
  }
  for (let slot = 0; slot < count; slot++) if (current[slot] === end) return true;
  return false;
}
