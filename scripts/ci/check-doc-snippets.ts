/**
 * CI: every fenced code block of the repository's Markdown says what it is, in an HTML comment on
 * the line before its fence:
 *
 * - `<!-- excerpt -->` (or `<!-- excerpt: why -->`): a fragment, an example output or a file shown
 *   in part, not meant to run as it stands;
 * - `<!-- executed: <test file> -->`: a test runs the block as written (the test names the document);
 * - `<!-- generated: <script> -->`: a script writes the block and a test fails when it is stale (the
 *   script names the document).
 *
 * A block without one fails, so a snippet that stops working cannot pass as one that runs. Prints
 * each problem; exits 1 if there is one.
 */
import { existsSync, readFileSync } from 'node:fs';
import { markdownFiles } from './check-doc-links';

export type SnippetMarker = { kind: 'excerpt' } | { kind: 'executed' | 'generated'; by: string };

export interface Snippet {
  /** 1-based line of the opening fence. */
  line: number;
  /** The fence's info string (`sh`, `yaml`, …), empty when it has none. */
  info: string;
  marker: SnippetMarker | null;
  /** The block's lines, without the fences (indentation of a list item kept). */
  body: string;
}

const MARKER = /^\s*<!--\s*(excerpt|executed|generated)(?::\s*(.*?))?\s*-->\s*$/;

function markerOf(line: string | undefined): SnippetMarker | null {
  const match = line === undefined ? null : MARKER.exec(line);
  if (!match) return null;
  if (match[1] === 'excerpt') return { kind: 'excerpt' };
  return match[2] ? { kind: match[1] as 'executed' | 'generated', by: match[2] } : null;
}

/** The fenced blocks of a document, each with the marker on the last non-blank line before it. */
export function snippetsOf(markdown: string): Snippet[] {
  const lines = markdown.split('\n');
  const snippets: Snippet[] = [];
  let open: { fence: string; line: number; info: string; marker: SnippetMarker | null; body: string[] } | null = null;
  for (const [index, line] of lines.entries()) {
    const fence = /^\s*(`{3,}|~{3,})\s*([^`\s]*)/.exec(line);
    if (open) {
      if (fence && fence[1].startsWith(open.fence) && fence[2] === '') {
        snippets.push({ line: open.line, info: open.info, marker: open.marker, body: open.body.join('\n') });
        open = null;
      } else open.body.push(line);
      continue;
    }
    if (!fence) continue;
    let before = index - 1;
    while (before >= 0 && lines[before].trim() === '') before -= 1;
    open = { fence: fence[1], line: index + 1, info: fence[2], marker: markerOf(lines[before]), body: [] };
  }
  return snippets;
}

/** What is wrong with the blocks of `path`: unmarked ones, and markers naming a file that does not exist or does not name the document. */
export function snippetProblems(path: string, markdown: string, read: (path: string) => string | null): string[] {
  const problems: string[] = [];
  for (const snippet of snippetsOf(markdown)) {
    const where = `${path}:${snippet.line}`;
    if (snippet.marker === null) {
      problems.push(
        `${where}: a fenced block (${snippet.info || 'no info string'}) with no <!-- excerpt -->, <!-- executed: <test> --> or <!-- generated: <script> --> on the line before it`,
      );
      continue;
    }
    if (snippet.marker.kind === 'excerpt') continue;
    const source = read(snippet.marker.by);
    if (source === null) problems.push(`${where}: ${snippet.marker.kind} by ${snippet.marker.by}, which does not exist`);
    else if (!source.includes(path)) problems.push(`${where}: ${snippet.marker.kind} by ${snippet.marker.by}, which does not name ${path}`);
  }
  return problems;
}

function readIfExists(path: string): string | null {
  return existsSync(path) ? readFileSync(path, 'utf8') : null;
}

export function repositorySnippetProblems(): string[] {
  return markdownFiles().flatMap((path) => snippetProblems(path, readFileSync(path, 'utf8'), readIfExists));
}

/** One block of a document by the test or script its marker names (`executed: test/x.e2e-spec.ts`), in document order. */
export function markedSnippets(path: string, by: string): Snippet[] {
  return snippetsOf(readFileSync(path, 'utf8')).filter((snippet) => snippet.marker !== null && snippet.marker.kind !== 'excerpt' && snippet.marker.by === by);
}

if (process.argv[1] && /check-doc-snippets\.[jt]s$/.test(process.argv[1])) {
  const problems = repositorySnippetProblems();
  for (const problem of problems) console.error(`[snippets] ${problem}`);
  if (problems.length > 0) process.exit(1);
  console.log(`[snippets] every fenced block of ${markdownFiles().length} Markdown files is an excerpt, executed or generated`);
}
