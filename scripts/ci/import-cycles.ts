/**
 * Import cycles among the TypeScript files of a repository: every file's static `import … from`
 * and `export … from` (type-only ones included), resolved through relative paths and the `paths`
 * of its tsconfig.json; a cycle is a strongly connected component of more than one file, or a
 * file that imports itself. scripts/ci/check-import-cycles.ts runs it over apps/ and libs/.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.build', 'build', 'coverage']);
const EXTENSIONS = ['.ts', '.tsx'];

function sourceFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) found.push(...sourceFiles(path));
    } else if (EXTENSIONS.some((extension) => entry.name.endsWith(extension)) && !entry.name.endsWith('.d.ts')) {
      found.push(path);
    }
  }
  return found;
}

/** The path aliases of `root`'s tsconfig.json, as [prefix, directory] pairs, longest prefix first. */
function pathAliases(root: string): [string, string][] {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), (path) => readFileSync(path, 'utf8'));
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const paths = (config.config.compilerOptions?.paths ?? {}) as Record<string, string[]>;
  return Object.entries(paths)
    .map(([alias, [target]]): [string, string] => [alias.replace(/\*$/, ''), join(root, target.replace(/\*$/, ''))])
    .sort(([a], [b]) => b.length - a.length);
}

function asFile(base: string): string | null {
  const candidates = [base, ...EXTENSIONS.map((extension) => base + extension), ...EXTENSIONS.map((extension) => join(base, 'index' + extension))];
  for (const candidate of [...new Set(candidates)]) {
    if (existsSync(candidate) && statSync(candidate).isFile() && EXTENSIONS.some((extension) => candidate.endsWith(extension))) return candidate;
  }
  return base.endsWith('.js') ? asFile(base.slice(0, -'.js'.length)) : null;
}

function resolveImport(from: string, specifier: string, aliases: [string, string][]): string | null {
  if (specifier.startsWith('.')) return asFile(resolve(dirname(from), specifier));
  for (const [prefix, dir] of aliases) {
    if (specifier === prefix.replace(/\/$/, '') || (prefix.endsWith('/') && specifier.startsWith(prefix))) {
      return asFile(join(dir, specifier.slice(prefix.length)));
    }
  }
  return null; // a package
}

/** A file's static `import … from` and `export … from` specifiers, type-only ones included. */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    if (
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
      statement.moduleSpecifier &&
      ts.isStringLiteral(statement.moduleSpecifier)
    ) {
      specifiers.push(statement.moduleSpecifier.text);
    }
  }
  return specifiers;
}

/** Tarjan's strongly connected components, iteratively (deep import chains would overflow the stack). */
function stronglyConnected(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; edge: number }[] = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const target = edges[frame.edge++];
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, edge: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component);
      }
    }
  }
  return components;
}

/** One shortest cycle through the component's first file, to show which imports close it. */
function cycleThrough(component: string[], graph: Map<string, string[]>): string[] {
  const members = new Set(component);
  const start = [...component].sort()[0];
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const target of graph.get(node) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(previous.get(path[0])!);
        return [...path, start];
      }
      if (!previous.has(target)) {
        previous.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start];
}

export interface ImportCycle {
  /** The files of the cycle, relative to the root, sorted. */
  files: string[];
  /** One shortest cycle through them, first file last again. */
  example: string[];
}

/** The import cycles among the files under `dirs` of `root` (those that exist), and how many files were read. */
export function findImportCycles(root: string, dirs: string[]): { fileCount: number; cycles: ImportCycle[] } {
  const aliases = pathAliases(root);
  const files = dirs.filter((dir) => existsSync(join(root, dir))).flatMap((dir) => sourceFiles(join(root, dir)));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = importsOf(file)
      .map((specifier) => resolveImport(file, specifier, aliases))
      .filter((target): target is string => target !== null);
    graph.set(file, [...new Set(targets)]);
  }
  const name = (file: string): string => relative(root, file);
  const cycles = stronglyConnected(graph)
    .filter((component) => component.length > 1 || (graph.get(component[0]) ?? []).includes(component[0]))
    .map((component) => ({ files: component.map(name).sort(), example: cycleThrough(component, graph).map(name) }));
  return { fileCount: files.length, cycles };
}
