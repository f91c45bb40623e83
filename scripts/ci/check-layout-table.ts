/**
 * CI: the code-layout table of docs/architecture.md matches the tree. Every path it names exists,
 * and it names every app, every folder of the edge and every lib. Prints each problem; exits 1 if
 * there is one.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

const DOCUMENT = 'docs/architecture.md';
const HEADING = '## Code layout';

function directories(path: string): string[] {
  return readdirSync(path)
    .filter((name) => !name.startsWith('.') && statSync(join(path, name)).isDirectory())
    .sort();
}

/** `a/{b,c}/d` → `a/b/d`, `a/c/d`; `<service>` → every service app (one with a bootstrap.ts). */
export function expandPath(path: string, apps: string[]): string[] {
  const brace = /\{([^{}]+)\}/.exec(path);
  if (brace) return brace[1].split(',').flatMap((choice) => expandPath(path.replace(brace[0], choice.trim()), apps));
  if (path.includes('<service>'))
    return apps.filter((app) => existsSync(join('apps', app, 'src', 'bootstrap.ts'))).flatMap((app) => expandPath(path.replace('<service>', app), apps));
  return [path.replace(/\/$/, '')];
}

/** The paths the first column of the table names: each `code span`, a bare file name beside the path before it. */
export function tablePaths(document: string, apps: string[]): string[] {
  const start = document.indexOf(HEADING);
  if (start < 0) throw new Error(`${DOCUMENT} has no "${HEADING}" section`);
  const rows = document
    .slice(start)
    .split('\n')
    .slice(1)
    .filter((line) => line.startsWith('| `'));
  const paths: string[] = [];
  for (const row of rows) {
    const cell = row.split(' | ')[0];
    let previous = '';
    for (const [, span] of cell.matchAll(/`([^`]+)`/g)) {
      const path = span.includes('/') ? span : previous ? join(dirname(previous), span) : span;
      previous = span.includes('/') ? span.replace(/\/$/, '/x') : previous;
      paths.push(...expandPath(path, apps));
    }
  }
  return paths;
}

export function layoutProblems(document: string): string[] {
  const apps = directories('apps');
  const named = tablePaths(document, apps);
  const problems = named.filter((path) => !existsSync(path)).map((path) => `names ${path}, which is not in the tree`);
  const covered = (path: string): boolean => named.some((candidate) => candidate === path || candidate.startsWith(`${path}/`));
  const required = [
    ...apps.map((app) => `apps/${app}`),
    ...directories('apps/edge/src').map((folder) => `apps/edge/src/${folder}`),
    ...directories('libs').map((lib) => `libs/${lib}`),
  ];
  for (const path of required) if (!covered(path)) problems.push(`does not name ${path}`);
  return problems;
}

if (process.argv[1] && /check-layout-table\.[jt]s$/.test(process.argv[1])) {
  const problems = layoutProblems(readFileSync(DOCUMENT, 'utf8'));
  for (const problem of problems) console.error(`[layout] ${DOCUMENT} code layout ${problem}`);
  if (problems.length > 0) process.exit(1);
  console.log(`[layout] ${DOCUMENT}: the code layout table matches the tree`);
}
