import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { findImportCycles } from './import-cycles';

/** A throwaway repository: a tsconfig.json with one `@app/*` library alias, and the given files. */
function repository(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'import-cycles-'));
  const tsconfig = { compilerOptions: { paths: { '@app/shared': ['./libs/shared/src'], '@app/shared/*': ['./libs/shared/src/*'] } } };
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify(tsconfig));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('findImportCycles', () => {
  const roots: string[] = [];
  const scan = (files: Record<string, string>) => {
    const root = repository(files);
    roots.push(root);
    return findImportCycles(root, ['apps', 'libs']);
  };
  afterAll(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });

  it('finds none in a tree that imports one way', () => {
    const { fileCount, cycles } = scan({
      'libs/shared/src/index.ts': "export * from './ids';\n",
      'libs/shared/src/ids.ts': 'export const id = 1;\n',
      'apps/a/src/main.ts': "import { id } from '@app/shared';\nimport { other } from './other';\nexport const main = id + other;\n",
      'apps/a/src/other.ts': "import { id } from '@app/shared/ids';\nexport const other = id;\n",
    });
    expect(fileCount).toBe(4);
    expect(cycles).toEqual([]);
  });

  it('finds a cycle through the library barrel and a path alias, with one path around it', () => {
    const { cycles } = scan({
      'libs/shared/src/index.ts': "export * from './tracer';\nexport * from './postgres';\n",
      'libs/shared/src/tracer.ts': "import { wrap } from './postgres';\nexport const start = () => wrap();\n",
      'libs/shared/src/postgres.ts': "import { start } from '@app/shared';\nexport const wrap = () => start;\n",
    });
    expect(cycles).toHaveLength(1);
    expect(cycles[0].files).toEqual(['libs/shared/src/index.ts', 'libs/shared/src/postgres.ts', 'libs/shared/src/tracer.ts']);
    expect(cycles[0].example[0]).toBe(cycles[0].example[cycles[0].example.length - 1]);
  });

  it('counts type-only imports and re-exports, in .ts and .tsx files', () => {
    const { cycles } = scan({
      'apps/a/src/repository.ts': "import { nextId } from './creation';\nexport class Repository { id = nextId(); }\n",
      'apps/a/src/creation.ts': "import type { Key } from './idempotency';\nexport const nextId = (key?: Key) => String(key);\n",
      'apps/a/src/idempotency.ts': "export type { Repository } from './repository';\nexport interface Key { key: string }\n",
      'apps/a/src/view.tsx': "import type { Props } from './props';\nexport type View = Props;\n",
      'apps/a/src/props.ts': "import type { View } from './view';\nexport interface Props { view?: View }\n",
    });
    expect(cycles.map((cycle) => cycle.files)).toEqual(
      expect.arrayContaining([
        ['apps/a/src/creation.ts', 'apps/a/src/idempotency.ts', 'apps/a/src/repository.ts'],
        ['apps/a/src/props.ts', 'apps/a/src/view.tsx'],
      ]),
    );
    expect(cycles).toHaveLength(2);
  });

  it('finds a file that imports itself, and ignores packages and dynamic imports', () => {
    const { cycles } = scan({
      'apps/a/src/self.ts': "import { self } from './self';\nimport pg from 'pg';\nexport const again = [self, pg];\n",
      'apps/a/src/lazy.ts': "export const load = () => import('./loader');\n",
      'apps/a/src/loader.ts': "import { load } from './lazy';\nexport const loader = load;\n",
    });
    expect(cycles.map((cycle) => cycle.files)).toEqual([['apps/a/src/self.ts']]);
  });
});
