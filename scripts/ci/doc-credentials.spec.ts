import { execFileSync } from 'node:child_process';
import { isAbsolute } from 'node:path';
import { readFileSync } from 'node:fs';
import { markdownFiles } from './check-doc-links';
import { snippetsOf } from './check-doc-snippets';

/** The files the documents' commands write a credential to or read one from, as written (`.secrets/planner.secret`). */
function credentialPaths(markdown: string): string[] {
  const paths: string[] = [];
  for (const { body } of snippetsOf(markdown)) {
    for (const [, path] of body.matchAll(/--upstream-(?:secret|client-key)-file\s+(\S+)/g)) paths.push(path);
    for (const [, path] of body.matchAll(/>\s*(\S+\.(?:secret|key|creds|token))\b/g)) paths.push(path);
    // `nats:credentials --dir <dir>` writes a seed per holder under <dir>/credentials/.
    for (const [, dir] of body.matchAll(/nats:credentials\b[^\n]*?--dir\s+(\S+)/g))
      paths.push(`${dir}/credentials/edge.nk`, `${dir}/credentials/operator.creds`);
  }
  return paths;
}

/** Whether git ignores a path of the clone (whether or not it exists). */
function ignored(path: string): boolean {
  try {
    execFileSync('git', ['check-ignore', '--quiet', '--no-index', path], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('credentials the documents tell people to write', () => {
  it('go outside the clone or where git ignores them', () => {
    const found = markdownFiles().flatMap((document) => credentialPaths(readFileSync(document, 'utf8')).map((path) => ({ document, path })));
    // The README's upstream recipe writes one; a check that finds none checks nothing.
    expect(found).toEqual(
      expect.arrayContaining([
        { document: 'README.md', path: '.secrets/planner.secret' },
        { document: 'docs/nats-security.md', path: 'nats-auth/credentials/edge.nk' },
      ]),
    );
    // Placeholders (`<file>`) name no path; `~/…`, `$HOME/…` and absolute paths are outside the clone.
    const inTheClone = found.filter(({ path }) => !isAbsolute(path) && !/^[~$<]/.test(path));
    expect(inTheClone.filter(({ path }) => !ignored(path))).toEqual([]);
  });

  it('would be caught in a path git does not ignore', () => {
    expect(ignored('planner.secret')).toBe(true);
    expect(ignored('nats-auth/credentials/tasks.nk')).toBe(true);
    expect(ignored('docs/planner.txt')).toBe(false);
  });
});
