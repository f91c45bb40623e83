import type { TrustPolicy } from '../api/types';

/** A YAML list of strings; each is written JSON-quoted, which YAML reads as a double-quoted scalar (`*@acme` needs quotes). */
function yamlList(key: string, entries: string[]): string {
  if (entries.length === 0) return `${key}: []\n`;
  return `${key}:\n${entries.map((entry) => `  - ${JSON.stringify(entry)}\n`).join('')}`;
}

/** Rules, each written as one JSON object (YAML reads JSON as a flow mapping); none: the key left out, which the relay reads as none. */
function yamlRules(key: string, rules: readonly object[] | undefined): string {
  if (!rules || rules.length === 0) return '';
  return `${key}:\n${rules.map((rule) => `  - ${JSON.stringify(rule)}\n`).join('')}`;
}

/**
 * A trust policy as the `trust.yaml` text an admin edits (the relay parses it; the console only
 * writes it). Its hold and tool-prompt rules and its chain bounds are written too: a save replaces
 * the whole policy, so a rule left out of the text would be dropped.
 */
export function trustPolicyToYaml(
  policy: Pick<TrustPolicy, 'handle' | 'allow' | 'block'> & { hold?: TrustPolicy['hold']; tool_prompts?: readonly object[]; chain?: object },
): string {
  const lists = `${yamlList('allow', policy.allow)}${yamlList('block', policy.block)}`;
  const chain = policy.chain && Object.keys(policy.chain).length > 0 ? `chain: ${JSON.stringify(policy.chain)}\n` : '';
  return `agent: ${JSON.stringify(policy.handle)}\n${lists}${yamlRules('hold', policy.hold)}${yamlRules('tool_prompts', policy.tool_prompts)}${chain}`;
}

export interface LineExcerpt {
  line: number;
  column: number;
  text: string;
  /** Spaces up to the column, then a caret under it. */
  marker: string;
}

/** The line of the text an error points at (1-based line and column), to show under the editor. */
export function excerptAt(text: string, line: number, column: number): LineExcerpt | null {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (line < 1 || line > lines.length) return null;
  const content = lines[line - 1];
  const at = Math.min(Math.max(column, 1), content.length + 1);
  return { line, column: at, text: content, marker: `${' '.repeat(at - 1)}^` };
}

/** The character offset where a 1-based line starts, to put the editor's caret there. */
export function offsetOfLine(text: string, line: number): number {
  let offset = 0;
  const lines = text.split('\n');
  for (let index = 0; index < Math.min(line - 1, lines.length); index += 1) offset += lines[index].length + 1;
  return offset;
}
