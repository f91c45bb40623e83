/**
 * CI: every relative link in the repository's Markdown files resolves. A link's file (or folder)
 * exists, and a `#fragment` names a heading of its Markdown file, as GitHub makes heading anchors.
 * Prints each broken link; exits 1 if there is one.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/** GitHub's anchor of a heading: lower case, punctuation dropped, each space a hyphen. */
export function headingSlug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The text outside fenced code blocks; inline code spans keep their text (headings) or become a word (links, which code cannot hold). */
function proseOf(markdown: string, inlineCode: 'text' | 'word'): string {
  const lines: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      lines.push('');
      continue;
    }
    lines.push(fence === null ? line.replace(/(`+)([^`]*)\1/g, (_span, _ticks, code: string) => (inlineCode === 'text' ? code : 'code')) : '');
  }
  return lines.join('\n');
}

/** Every anchor a Markdown document offers: its headings' slugs (repeats numbered as GitHub does) and explicit ids. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const prose = proseOf(markdown, 'text');
  for (const [, heading] of prose.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = headingSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const [, id] of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id);
  return anchors;
}

/** The targets of a document's links and images, outside code. */
export function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  for (const [, target] of proseOf(markdown, 'word').matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(target);
  return targets;
}

/** The broken relative links of one document, `read` giving the text of another (null when it is not a file). */
export function brokenLinks(path: string, markdown: string, read: (path: string) => string | null, exists: (path: string) => boolean): string[] {
  const problems: string[] = [];
  for (const target of linkTargets(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [file, fragment] = target.split('#', 2);
    const resolved = file === '' ? path : normalize(join(dirname(path), decodeURIComponent(file))).replace(/(.)\/$/, '$1');
    if (resolved !== path && !exists(resolved)) {
      problems.push(`${path}: ${target}: ${resolved} does not exist`);
      continue;
    }
    if (fragment === undefined || fragment === '' || !resolved.endsWith('.md')) continue;
    const text = resolved === path ? markdown : read(resolved);
    if (text === null || !anchorsOf(text).has(decodeURIComponent(fragment).toLowerCase()))
      problems.push(`${path}: ${target}: ${resolved} has no heading #${fragment}`);
  }
  return problems;
}

function readIfFile(path: string): string | null {
  return existsSync(path) && statSync(path).isFile() ? readFileSync(path, 'utf8') : null;
}

const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', '.build', '.git', '.relay']);

/** Markdown files under a folder, outside build output and dependencies (a tree without git). */
function markdownUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = folder === '.' ? entry.name : join(folder, entry.name);
    if (entry.isDirectory()) return SKIPPED_FOLDERS.has(entry.name) ? [] : markdownUnder(path);
    return entry.isFile() && entry.name.endsWith('.md') ? [path] : [];
  });
}

/** The Markdown files git tracks, or every one in the tree when it is not a git checkout. */
export function markdownFiles(): string[] {
  let tracked: string;
  try {
    tracked = execFileSync('git', ['ls-files', '*.md'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return markdownUnder('.').sort();
  }
  return tracked.split('\n').filter((path) => path !== '' && existsSync(path));
}

export function repositoryLinkProblems(): string[] {
  return markdownFiles().flatMap((path) => brokenLinks(path, readFileSync(path, 'utf8'), readIfFile, existsSync));
}

if (process.argv[1] && /check-doc-links\.[jt]s$/.test(process.argv[1])) {
  const files = markdownFiles();
  const problems = repositoryLinkProblems();
  for (const problem of problems) console.error(`[links] ${problem}`);
  if (problems.length > 0) process.exit(1);
  console.log(`[links] every relative link of ${files.length} Markdown files resolves`);
}
