import { execFile } from 'node:child_process';
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
// @ts-expect-error: a plain ES module of the dev scripts, without type declarations.
import { BUILDS_DIR, KEPT_BUILDS, publishBuild, sourceDigest } from '../scripts/dev/dist-swap.mjs';

interface Published {
  dir: string;
  reused: boolean;
}
type Publish = (root: string, id: string, build: (outDir: string) => Promise<void>, options?: { link?: string }) => Promise<Published>;
const publish = publishBuild as Publish;
const digest = sourceDigest as (root: string, dirs?: string[], files?: string[]) => string;

const run = promisify(execFile);
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A build the way tsc writes one: the entry point first, the module it imports much later, so a
 * process started from a tree built in place meanwhile would fail with ERR_MODULE_NOT_FOUND.
 */
function slowBuild(label: string): (outDir: string) => Promise<void> {
  return async (outDir) => {
    await mkdir(join(outDir, 'apps', 'cli', 'src'), { recursive: true });
    await writeFile(join(outDir, 'apps', 'cli', 'src', 'main.js'), "import { label } from './lib.js';\nconsole.log(label);\n");
    for (let index = 0; index < 20; index++) {
      await writeFile(join(outDir, 'apps', 'cli', 'src', `filler-${index}.js`), `export const n = ${index};\n`);
      await pause(25);
    }
    await writeFile(join(outDir, 'apps', 'cli', 'src', 'lib.js'), `export const label = ${JSON.stringify(label)};\n`);
  };
}

/** Generous: each run of node is a process start on a shared machine. */
const TEST_TIMEOUT_MS = 240_000;

describe('npm run build: dist swapped in whole', () => {
  let root: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentrelay-build-swap-'));
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it(
    'a process started from dist while builds are swapped in always finds a whole tree',
    async () => {
      await publish(root, 'build-0', slowBuild('build-0'));
      let building = true;
      const seen = new Set<string>();
      const failures: string[] = [];
      const starter = (async () => {
        while (building) {
          try {
            const { stdout } = await run(process.execPath, ['dist/apps/cli/src/main.js'], { cwd: root });
            seen.add(stdout.trim());
          } catch (error) {
            failures.push((error as Error).message);
          }
        }
      })();
      for (let index = 1; index <= 4; index++) await publish(root, `build-${index}`, slowBuild(`build-${index}`));
      // At least one more start sees the last build.
      await pause(50);
      building = false;
      await starter;
      expect(failures).toEqual([]);
      expect(seen.has('build-4')).toBe(true);
      expect((await run(process.execPath, ['dist/apps/cli/src/main.js'], { cwd: root })).stdout.trim()).toBe('build-4');
      expect(lstatSync(join(root, 'dist')).isSymbolicLink()).toBe(true);
      expect(readlinkSync(join(root, 'dist'))).toBe(join(BUILDS_DIR, 'build-4'));
      // The current build and the newest KEPT_BUILDS before it stay; no unfinished directory is left.
      expect((await readdir(join(root, BUILDS_DIR))).sort()).toEqual(['build-1', 'build-2', 'build-3', 'build-4'].slice(-(KEPT_BUILDS as number) - 1));
    },
    TEST_TIMEOUT_MS,
  );

  it('unchanged sources reuse their build; two builds of the same sources at once both succeed', async () => {
    let builds = 0;
    const counting = async (outDir: string): Promise<void> => {
      builds++;
      await slowBuild('same')(outDir);
    };
    const [first, second] = await Promise.all([publish(root, 'same', counting), publish(root, 'same', counting)]);
    expect([first.dir, second.dir]).toEqual([join(root, BUILDS_DIR, 'same'), join(root, BUILDS_DIR, 'same')]);
    const again = await publish(root, 'same', counting);
    expect(again.reused).toBe(true);
    expect(builds).toBe(2);
    expect(await readdir(join(root, BUILDS_DIR))).toEqual(['same']);
  });

  it('a failed build leaves dist as it was', async () => {
    await publish(root, 'good', slowBuild('good'));
    await expect(
      publish(root, 'broken', async (outDir) => {
        await writeFile(join(outDir, 'half.js'), '');
        throw new Error('tsc failed');
      }),
    ).rejects.toThrow('tsc failed');
    expect(readlinkSync(join(root, 'dist'))).toBe(join(BUILDS_DIR, 'good'));
    expect(await readdir(join(root, BUILDS_DIR))).toEqual(['good']);
  });

  it('a dist built in place by an older version is kept as a build, and dist becomes the link', async () => {
    await mkdir(join(root, 'dist', 'apps'), { recursive: true });
    await writeFile(join(root, 'dist', 'apps', 'old.js'), 'old');
    await publish(root, 'new', slowBuild('new'));
    expect(readlinkSync(join(root, 'dist'))).toBe(join(BUILDS_DIR, 'new'));
    const legacy = (await readdir(join(root, BUILDS_DIR))).filter((name) => name.startsWith('legacy-'));
    expect(legacy).toHaveLength(1);
    expect(await readFile(join(root, BUILDS_DIR, legacy[0], 'apps', 'old.js'), 'utf8')).toBe('old');
  });

  it('the digest follows the sources and nothing else', async () => {
    await mkdir(join(root, 'apps', 'x'), { recursive: true });
    await writeFile(join(root, 'apps', 'x', 'a.ts'), 'export const a = 1;\n');
    await writeFile(join(root, 'package.json'), '{}');
    const before = digest(root);
    await mkdir(join(root, 'dist'), { recursive: true });
    await writeFile(join(root, 'dist', 'a.js'), 'built');
    expect(digest(root)).toBe(before);
    await writeFile(join(root, 'apps', 'x', 'a.ts'), 'export const a = 2;\n');
    expect(digest(root)).not.toBe(before);
    expect(existsSync(join(root, BUILDS_DIR))).toBe(false);
  });
});
