export type DiffLineKind = 'added' | 'removed' | 'context' | 'hunk' | 'header';

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
}

/** Splits unified diff text into lines that say what each one is (file headers, hunks, +, −, context). */
export function parseUnifiedDiff(diff: string): DiffLine[] {
  const lines = diff.replace(/\r\n?/g, '\n').split('\n');
  if (lines.at(-1) === '') lines.pop();
  let inHunk = false;
  return lines.map((text): DiffLine => {
    if (text.startsWith('@@')) {
      inHunk = true;
      return { kind: 'hunk', text };
    }
    if (text.startsWith('diff --git')) inHunk = false;
    if (!inHunk) return { kind: 'header', text };
    if (text.startsWith('+')) return { kind: 'added', text };
    if (text.startsWith('-')) return { kind: 'removed', text };
    return { kind: 'context', text };
  });
}

/** How many lines a diff adds and removes. */
export function diffStats(lines: DiffLine[]): { added: number; removed: number } {
  return {
    added: lines.filter((line) => line.kind === 'added').length,
    removed: lines.filter((line) => line.kind === 'removed').length,
  };
}
