// Builds that never change under a running process. Each build goes into a directory of its own,
// `.build/<digest of the sources>/`, and `dist` is a symbolic link to the current one, replaced in one
// rename(2): a hook or MCP server that an agent's session starts while the relay rebuilds resolves
// either the whole old tree or the whole new one, never a half-written one. Sources that did not
// change since a kept build are not built again.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

export const BUILDS_DIR = '.build';
/** Written last into a finished build: a directory without it is not one. */
export const COMPLETE_MARKER = '.complete';
/** Builds kept besides the current one, for processes started from them that load a module late. */
export const KEPT_BUILDS = 3;
/** An unfinished build directory this old belongs to a build that died. */
const STALE_PARTIAL_MS = 60 * 60 * 1000;

const SOURCE_DIRS = ['apps', 'libs', 'scripts'];
const SOURCE_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'nest-cli.json'];
const SKIPPED = new Set(['node_modules', 'dist', BUILDS_DIR, 'coverage']);

function walk(root, dir, files) {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(root, path, files);
    else if (entry.isFile()) files.push(path);
  }
}

/** The digest of everything a build reads: the same sources give the same build directory. */
export function sourceDigest(root, dirs = SOURCE_DIRS, files = SOURCE_FILES) {
  const paths = files.filter((file) => existsSync(join(root, file)));
  for (const dir of dirs) if (existsSync(join(root, dir))) walk(root, dir, paths);
  paths.sort();
  const hash = createHash('sha256');
  for (const path of paths) {
    hash.update(`${path}\0`);
    hash.update(readFileSync(join(root, path)));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/** Where `dist` points now (relative to the root), or null when it is missing or a plain directory. */
export function currentBuild(root, link = 'dist') {
  try {
    if (!lstatSync(join(root, link)).isSymbolicLink()) return null;
    return readlinkSync(join(root, link));
  } catch {
    return null;
  }
}

/**
 * Makes `.build/<id>` (with `build(outDir)` unless a finished one is there) and points `link` at it.
 * `build` writes into a fresh directory that becomes `.build/<id>` only when it is done; two builds of
 * the same sources at once both succeed, and the second one's copy is dropped.
 */
export async function publishBuild(root, id, build, { link = 'dist', log = () => undefined } = {}) {
  const builds = join(root, BUILDS_DIR);
  const target = join(builds, id);
  await mkdir(builds, { recursive: true });
  let reused = existsSync(join(target, COMPLETE_MARKER));
  if (!reused) {
    const partial = join(builds, `${id}.partial-${process.pid}-${randomBytes(3).toString('hex')}`);
    await rm(partial, { recursive: true, force: true });
    await mkdir(partial, { recursive: true });
    try {
      await build(partial);
      await writeFile(join(partial, COMPLETE_MARKER), `${new Date().toISOString()}\n`);
      try {
        await rename(partial, target);
      } catch (error) {
        // Another build of the same sources finished first (or left an unfinished directory behind).
        if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
        if (existsSync(join(target, COMPLETE_MARKER))) {
          reused = true;
        } else {
          await rm(target, { recursive: true, force: true });
          await rename(partial, target);
        }
      }
    } finally {
      await rm(partial, { recursive: true, force: true });
    }
  } else {
    log(`The sources have not changed since build ${id}: using it.`);
  }
  // Kept builds are pruned by age: the one in use is the newest.
  const now = new Date();
  await utimes(join(target, COMPLETE_MARKER), now, now);
  await pointAt(root, link, join(BUILDS_DIR, id));
  await prune(builds, id);
  return { dir: target, reused };
}

/** Replaces `link` by a symbolic link to `target` in one rename; a plain directory there is moved aside first. */
async function pointAt(root, link, target) {
  const path = join(root, link);
  let existing;
  try {
    existing = lstatSync(path);
  } catch {
    existing = null;
  }
  if (existing && !existing.isSymbolicLink()) {
    // A tree built in place by an older version: kept as a build, so running processes keep their files.
    const legacy = join(root, BUILDS_DIR, `legacy-${Date.now()}`);
    await rename(path, legacy);
    await writeFile(join(legacy, COMPLETE_MARKER), `${new Date().toISOString()}\n`);
  }
  const temporary = `${path}.link-${process.pid}-${randomBytes(3).toString('hex')}`;
  await symlink(relative(root, join(root, target)), temporary);
  try {
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** Removes finished builds beyond the newest KEPT_BUILDS besides `current`, and partial ones that died. */
async function prune(builds, current) {
  const finished = [];
  for (const name of await readdir(builds)) {
    if (name === current) continue;
    const path = join(builds, name);
    if (name.includes('.partial-')) {
      const { mtimeMs } = await stat(path).catch(() => ({ mtimeMs: Date.now() }));
      if (Date.now() - mtimeMs > STALE_PARTIAL_MS) await rm(path, { recursive: true, force: true });
      continue;
    }
    const marker = await stat(join(path, COMPLETE_MARKER)).catch(() => null);
    if (marker) finished.push({ path, at: marker.mtimeMs });
  }
  finished.sort((a, b) => b.at - a.at);
  for (const { path } of finished.slice(KEPT_BUILDS)) await rm(path, { recursive: true, force: true });
}
