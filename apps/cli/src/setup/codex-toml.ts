/**
 * The few edits `agentrelay setup codex` makes to a Codex `config.toml`, done on its text so that
 * every other line (comments, order, other servers) stays as it was: the `[mcp_servers.agentrelay]`
 * table and the `[features]` flag that turns hooks on. The scanner below reads TOML's structure
 * (tables, keys, where a multi-line value ends) well enough to find those places and to check the
 * result: no table or key defined twice, no string or bracket left open.
 */
export class TomlEditError extends Error {}

interface KeyEntry {
  kind: 'key';
  /** The table the key sits in ('' at the top), and the key's dotted path, both normalized. */
  table: string;
  key: string;
  /** Lines [first, last] the key and its value span. */
  first: number;
  last: number;
  /** The value's text, without a trailing comment. */
  value: string;
}

interface HeaderEntry {
  kind: 'header';
  table: string;
  arrayOfTables: boolean;
  line: number;
}

type Entry = KeyEntry | HeaderEntry;

/** Splits `a."b.c" . d` into ['a', 'b.c', 'd']. */
function keyPath(text: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quote: string | null = null;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (quote) {
      if (char === '\\' && quote === '"') {
        current += text[++index] ?? '';
      } else if (char === quote) quote = null;
      else current += char;
    } else if (char === '"' || char === "'") quote = char;
    else if (char === '.') {
      parts.push(current.trim());
      current = '';
    } else current += char;
  }
  if (quote) throw new TomlEditError(`an unterminated quoted key in "${text}"`);
  parts.push(current.trim());
  if (parts.some((part) => part === '')) throw new TomlEditError(`an empty key in "${text}"`);
  return parts;
}

const joinPath = (parts: string[]): string => parts.join('.');

/** Where in a value the scanner is between lines. */
interface ValueState {
  depth: number;
  multiline: '"""' | "'''" | null;
}

/** Scans one line of a value from `start`: updates depth and open multi-line strings, returns where a comment starts. */
function scanValue(line: string, start: number, state: ValueState): number {
  let index = start;
  while (index < line.length) {
    if (state.multiline) {
      const close = line.indexOf(state.multiline, index);
      if (close < 0) return line.length;
      if (state.multiline === '"""' && isEscaped(line, close)) {
        index = close + 1;
        continue;
      }
      index = close + 3;
      while (line[index] === state.multiline[0]) index++;
      state.multiline = null;
      continue;
    }
    const char = line[index];
    if (char === '#') return index;
    if (line.startsWith('"""', index) || line.startsWith("'''", index)) {
      state.multiline = line.slice(index, index + 3) as '"""' | "'''";
      index += 3;
      continue;
    }
    if (char === '"' || char === "'") {
      let end = index + 1;
      while (end < line.length && !(line[end] === char && (char === "'" || !isEscaped(line, end)))) end++;
      if (end >= line.length) throw new TomlEditError(`an unterminated string: ${line.trim()}`);
      index = end + 1;
      continue;
    }
    if (char === '[' || char === '{') state.depth++;
    if (char === ']' || char === '}') state.depth--;
    if (state.depth < 0) throw new TomlEditError(`an unbalanced bracket: ${line.trim()}`);
    index++;
  }
  return line.length;
}

function isEscaped(line: string, at: number): boolean {
  let backslashes = 0;
  for (let index = at - 1; index >= 0 && line[index] === '\\'; index--) backslashes++;
  return backslashes % 2 === 1;
}

/** The index of the first `=` outside quotes, or -1. */
function assignmentAt(line: string): number {
  let quote: string | null = null;
  for (let index = 0; index < line.length; index++) {
    const char = line[index];
    if (quote) {
      if (char === quote && !(quote === '"' && isEscaped(line, index))) quote = null;
    } else if (char === '"' || char === "'") quote = char;
    else if (char === '=') return index;
    else if (char === '#') return -1;
  }
  return -1;
}

/** The tables and keys of a TOML document, checked for what would make it invalid to load. */
export function scanToml(text: string): Entry[] {
  const lines = text.split('\n');
  const entries: Entry[] = [];
  let table = '';
  const tables = new Set<string>();
  const keys = new Set<string>();
  for (let number = 0; number < lines.length; number++) {
    const line = lines[number];
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    if (trimmed.startsWith('[')) {
      const arrayOfTables = trimmed.startsWith('[[');
      const close = arrayOfTables ? trimmed.indexOf(']]') : trimmed.indexOf(']');
      if (close < 0) throw new TomlEditError(`line ${number + 1}: an unclosed table header`);
      const rest = trimmed.slice(close + (arrayOfTables ? 2 : 1)).trim();
      if (rest !== '' && !rest.startsWith('#')) throw new TomlEditError(`line ${number + 1}: text after a table header`);
      table = joinPath(keyPath(trimmed.slice(arrayOfTables ? 2 : 1, close)));
      if (!arrayOfTables) {
        if (tables.has(table)) throw new TomlEditError(`line ${number + 1}: the table [${table}] is defined twice`);
        tables.add(table);
      } else {
        // Each [[table]] starts a new element, whose keys are its own.
        for (const key of [...keys]) if (key.startsWith(`${table}.`)) keys.delete(key);
      }
      entries.push({ kind: 'header', table, arrayOfTables, line: number });
      continue;
    }
    const equals = assignmentAt(line);
    if (equals < 0) throw new TomlEditError(`line ${number + 1}: neither a table header nor key = value`);
    const key = joinPath(keyPath(line.slice(0, equals)));
    const full = table ? `${table}.${key}` : key;
    if (keys.has(full) || tables.has(full)) throw new TomlEditError(`line ${number + 1}: the key ${full} is defined twice`);
    keys.add(full);
    const state: ValueState = { depth: 0, multiline: null };
    let last = number;
    let comment = scanValue(line, equals + 1, state);
    let value = line.slice(equals + 1, comment);
    while (state.depth > 0 || state.multiline) {
      last++;
      if (last >= lines.length) throw new TomlEditError(`line ${number + 1}: the value of ${key} never ends`);
      comment = scanValue(lines[last], 0, state);
      value += `\n${lines[last].slice(0, comment)}`;
    }
    entries.push({ kind: 'key', table, key, first: number, last, value: value.trim() });
    number = last;
  }
  return entries;
}

/** A TOML basic string (JSON's escapes are TOML's). */
export const tomlString = (text: string): string => JSON.stringify(text);

const BARE_KEY = /^[A-Za-z0-9_-]+$/;
const tomlKey = (key: string): string => (BARE_KEY.test(key) ? key : tomlString(key));

/** `{ A = "x", B = "y" }` → its pairs; only string values (what `env` holds); throws for anything else. */
export function parseStringTable(value: string): Record<string, string> {
  const inner = value.trim();
  if (!inner.startsWith('{') || !inner.endsWith('}')) throw new TomlEditError(`expected an inline table of strings, found ${value}`);
  const body = inner.slice(1, -1).trim();
  const pairs: Record<string, string> = {};
  if (body === '') return pairs;
  const pattern = /\s*([A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*")\s*=\s*("(?:[^"\\]|\\.)*"|'[^']*')\s*(,|$)/y;
  let at = 0;
  while (at < body.length) {
    pattern.lastIndex = at;
    const match = pattern.exec(body);
    if (!match) throw new TomlEditError(`expected an inline table of strings, found ${value}`);
    const key = match[1].startsWith('"') ? (JSON.parse(match[1]) as string) : match[1];
    pairs[key] = match[2].startsWith("'") ? match[2].slice(1, -1) : (JSON.parse(match[2]) as string);
    at = pattern.lastIndex;
    if (match[3] === '' && at < body.length) throw new TomlEditError(`expected an inline table of strings, found ${value}`);
  }
  return pairs;
}

/** `["A", "B"]` → its strings; throws for anything else. */
export function parseStringArray(value: string): string[] {
  const compact = value.replace(/#[^\n]*/g, '');
  const inner = compact.trim();
  if (!inner.startsWith('[') || !inner.endsWith(']')) throw new TomlEditError(`expected an array of strings, found ${value}`);
  const found = [...inner.slice(1, -1).matchAll(/\s*("(?:[^"\\]|\\.)*"|'[^']*')\s*(?:,|$)/g)];
  const rebuilt = found.map((match) => match[0]).join('');
  if (rebuilt.trim() !== inner.slice(1, -1).trim()) throw new TomlEditError(`expected an array of strings, found ${value}`);
  return found.map((match) => (match[1].startsWith("'") ? match[1].slice(1, -1) : (JSON.parse(match[1]) as string)));
}

export const inlineTable = (pairs: Record<string, string>): string =>
  Object.keys(pairs).length === 0
    ? '{}'
    : `{ ${Object.entries(pairs)
        .map(([key, text]) => `${tomlKey(key)} = ${tomlString(text)}`)
        .join(', ')} }`;
export const stringArray = (items: string[]): string => `[${items.map(tomlString).join(', ')}]`;

export interface CodexServer {
  command: string;
  args: string[];
  /** Set in the server's environment. */
  env: Record<string, string>;
  /** Passed through from Codex's own environment (so secrets stay out of the file). */
  envVars: string[];
  /**
   * Further keys of the table, as TOML values, written when the table does not set them: a value
   * already there is the person's and is kept (with a note when it differs).
   */
  defaults?: Record<string, string>;
}

export interface TomlEdit {
  text: string;
  changes: string[];
  notes: string[];
}

function withNewline(text: string): string {
  return text === '' || text.endsWith('\n') ? text : `${text}\n`;
}

/**
 * Writes `[mcp_servers.<name>]` with the server's command, args, env and env_vars, keeping every
 * other key of that table, and the other variables of its `env` except those passed through.
 */
export function upsertMcpServer(text: string, name: string, server: CodexServer): TomlEdit {
  const entries = scanToml(text);
  const table = `mcp_servers.${name}`;
  const header = entries.find((entry): entry is HeaderEntry => entry.kind === 'header' && entry.table === table);
  const within = (path: string): boolean => path === table || path.startsWith(`${table}.`);
  const elsewhere = entries.find(
    (entry) =>
      (entry.kind === 'key' && entry.table !== table && within(entry.table ? `${entry.table}.${entry.key}` : entry.key)) ||
      (entry.kind === 'header' && entry.table.startsWith(`${table}.`)),
  );
  if (elsewhere) {
    throw new TomlEditError(
      `config.toml defines the ${name} MCP server in a form setup does not edit (${elsewhere.kind === 'header' ? `[${elsewhere.table}]` : elsewhere.key}); ` +
        `make it one [${table}] table with inline values, or edit it by hand`,
    );
  }
  const wanted = (existing: Map<string, KeyEntry>): Array<[string, string]> => {
    const env = existing.has('env') ? parseStringTable((existing.get('env') as KeyEntry).value) : {};
    for (const passed of server.envVars) delete env[passed];
    const envVars = existing.has('env_vars') ? parseStringArray((existing.get('env_vars') as KeyEntry).value) : [];
    return [
      ['command', tomlString(server.command)],
      ['args', stringArray(server.args)],
      ['env', inlineTable({ ...env, ...server.env })],
      ['env_vars', stringArray([...envVars, ...server.envVars.filter((variable) => !envVars.includes(variable))])],
      ...Object.entries(server.defaults ?? {}).map(([key, value]): [string, string] => [key, existing.get(key)?.value ?? value]),
    ];
  };
  const keptNotes = (existing: Map<string, KeyEntry>): string[] =>
    Object.entries(server.defaults ?? {})
      .filter(([key, value]) => existing.has(key) && (existing.get(key) as KeyEntry).value !== value)
      .map(([key, value]) => `kept ${table}.${key} = ${(existing.get(key) as KeyEntry).value} (setup writes ${value})`);

  if (!header) {
    const lines = wanted(new Map()).map(([key, value]) => `${key} = ${value}`);
    const base = withNewline(text);
    const next = `${base}${base === '' ? '' : '\n'}[${table}]\n${lines.join('\n')}\n`;
    scanToml(next);
    return { text: next, changes: [`added [${table}]`], notes: [] };
  }

  const existing = new Map<string, KeyEntry>();
  for (const entry of entries) if (entry.kind === 'key' && entry.table === table) existing.set(entry.key, entry);
  const lines = text.split('\n');
  const changes: string[] = [];
  const notes: string[] = keptNotes(existing);
  const literalKey = existing.has('env') && server.envVars.some((variable) => variable in parseStringTable((existing.get('env') as KeyEntry).value));
  if (literalKey) notes.push(`removed the literal ${server.envVars.join(', ')} from [${table}].env: Codex now passes it through from your environment`);
  const replacements = new Map<number, { last: number; line: string }>();
  const additions: string[] = [];
  for (const [key, value] of wanted(existing)) {
    const entry = existing.get(key);
    if (!entry) {
      additions.push(`${key} = ${value}`);
      changes.push(`set ${table}.${key}`);
    } else if (entry.value !== value) {
      replacements.set(entry.first, { last: entry.last, line: `${key} = ${value}` });
      changes.push(`set ${table}.${key}`);
    }
  }
  if (changes.length === 0) return { text, changes, notes };
  const sectionKeys = [...existing.values()];
  const insertAfter = sectionKeys.length ? Math.max(...sectionKeys.map((entry) => entry.last)) : header.line;
  const out: string[] = [];
  for (let number = 0; number < lines.length; number++) {
    const replacement = replacements.get(number);
    if (replacement) {
      out.push(replacement.line);
      number = replacement.last;
    } else out.push(lines[number]);
    if (number === insertAfter) out.push(...additions);
  }
  const next = out.join('\n');
  scanToml(next);
  return { text: next, changes, notes };
}

/**
 * Turns Codex hooks on (`[features] hooks = true`, the documented flag; `codex_hooks` is its older
 * alias) unless the file already says either way: a `false` there is left alone, with a note.
 */
export function enableHooksFeature(text: string): TomlEdit {
  const entries = scanToml(text);
  const flag = entries.find(
    (entry): entry is KeyEntry =>
      entry.kind === 'key' &&
      ((entry.table === 'features' && (entry.key === 'hooks' || entry.key === 'codex_hooks')) ||
        (entry.table === '' && (entry.key === 'features.hooks' || entry.key === 'features.codex_hooks'))),
  );
  if (flag) {
    return flag.value === 'true'
      ? { text, changes: [], notes: [] }
      : {
          text,
          changes: [],
          notes: [`config.toml sets features.${flag.key.replace(/^features\./, '')} = ${flag.value}: Codex hooks stay off until you change it`],
        };
  }
  const inline = entries.find((entry) => entry.kind === 'key' && entry.table === '' && entry.key === 'features');
  if (inline) return { text, changes: [], notes: ['config.toml sets features as an inline table: add hooks = true to it to turn Codex hooks on'] };
  const header = entries.find((entry): entry is HeaderEntry => entry.kind === 'header' && entry.table === 'features');
  let next: string;
  if (header) {
    const lines = text.split('\n');
    lines.splice(header.line + 1, 0, 'hooks = true');
    next = lines.join('\n');
  } else {
    const base = withNewline(text);
    next = `${base}${base === '' ? '' : '\n'}[features]\nhooks = true\n`;
  }
  scanToml(next);
  return { text: next, changes: ['set features.hooks = true'], notes: [] };
}
