import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const SOURCE = resolve('apps/notifier/src');

/**
 * The notifier's parts from the top down (docs/architecture.md#code-layout): each imports only
 * those below it. The process's wiring (the module, the controller, the entry points and the
 * entity list of `database/`) sits above them all and is not listed.
 */
const LAYERS = ['event-consumers', 'events', 'deliveries', 'upstream', 'targets', 'approvals', 'secrets', 'messaging', 'notifier.config', 'outbound'];

/** The sub-parts of `upstream/` from the top down, in layers as the parts are. */
const UPSTREAM = resolve(SOURCE, 'upstream');
const UPSTREAM_LAYERS = ['send', 'follow', 'client', 'cards', 'identity', 'health'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The part of the notifier a file belongs to: its folder under src/, or its own name for a file at the top. */
function partOf(file: string): string {
  const [first, ...rest] = relative(SOURCE, file).split('/');
  return rest.length > 0 ? first : first.replace(/\.ts$/, '');
}

/** The sub-part of `upstream/` a file belongs to (null: outside `upstream/`, or a file at its top). */
function upstreamPartOf(file: string): string | null {
  const path = relative(UPSTREAM, file);
  if (path.startsWith('..')) return null;
  const [first, ...rest] = path.split('/');
  return rest.length > 0 ? first : null;
}

function relativeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  return source.statements.flatMap((statement) =>
    (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
    statement.moduleSpecifier &&
    ts.isStringLiteral(statement.moduleSpecifier) &&
    statement.moduleSpecifier.text.startsWith('.')
      ? [resolve(dirname(file), statement.moduleSpecifier.text)]
      : [],
  );
}

describe('the notifier in layers', () => {
  it('has no import running from a part up to a part above it', () => {
    const upward: string[] = [];
    for (const file of sourceFiles(SOURCE)) {
      const from = LAYERS.indexOf(partOf(file));
      if (from < 0) continue;
      for (const target of relativeImports(file)) {
        const to = LAYERS.indexOf(partOf(target));
        if (to < 0 || to < from) upward.push(`${relative(SOURCE, file)} -> ${relative(SOURCE, target)}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('has no import running from a sub-part of upstream/ up to one above it', () => {
    const upward: string[] = [];
    for (const file of sourceFiles(UPSTREAM)) {
      const from = UPSTREAM_LAYERS.indexOf(upstreamPartOf(file) ?? '');
      for (const target of relativeImports(file)) {
        const part = upstreamPartOf(target);
        if (part === null) continue;
        const to = UPSTREAM_LAYERS.indexOf(part);
        if (from < 0 || to < 0 || to < from) upward.push(`${relative(SOURCE, file)} -> ${relative(SOURCE, target)}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('names every sub-part of upstream/', () => {
    const parts = new Set(sourceFiles(UPSTREAM).map((file) => upstreamPartOf(file) ?? relative(UPSTREAM, file)));
    expect([...parts].sort()).toEqual([...UPSTREAM_LAYERS].sort());
  });

  it('names every part of the notifier but its wiring', () => {
    const wiring = ['bootstrap', 'main', 'notifier.module', 'notifier.controller', 'database'];
    const parts = new Set(sourceFiles(SOURCE).map(partOf));
    expect([...parts].filter((part) => !wiring.includes(part)).sort()).toEqual([...LAYERS].sort());
  });
});
