import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const CONSOLE_SOURCES = ['apps/console', 'package-lock.json'];
export const CONSOLE_DIST = 'dist/console';

function newestChange(path: string): number {
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.mtimeMs;
  return readdirSync(path).reduce((newest, entry) => Math.max(newest, newestChange(join(path, entry))), stats.mtimeMs);
}

/** Whether `dist/console` is missing or older than a console source file (or the lockfile). */
export function consoleBuildIsStale(root = process.cwd()): boolean {
  const index = join(root, CONSOLE_DIST, 'index.html');
  if (!existsSync(index)) return true;
  const builtAt = statSync(index).mtimeMs;
  return CONSOLE_SOURCES.some((source) => newestChange(join(root, source)) > builtAt);
}

/** Builds the console (Vite) when its build is missing or stale, so browser tests see the current code. */
export function ensureConsoleBuild(root = process.cwd()): void {
  if (!consoleBuildIsStale(root)) return;
  console.log('Building the console (npm run build:console)…');
  // Jest sets NODE_ENV=test, which would give Vite React's development build; the tests drive what ships.
  execFileSync('npm', ['run', '--silent', 'build:console'], { cwd: root, stdio: 'inherit', env: { ...process.env, NODE_ENV: 'production' } });
}
