// Finds a compiled entry point under dist/ and builds the project first when it is missing (a fresh
// clone): the build's output goes to stderr, so an MCP server's stdout carries nothing but protocol.
// dist is a link to one finished build (scripts/dev/dist-swap.mjs); the entry is loaded by its real
// path, so everything it imports comes from that same build even when a rebuild swaps dist meanwhile.
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The file URL of `dist/<entry>` (its real path), after building when it does not exist yet. */
export function ensureBuilt(entry) {
  const target = new URL(`../dist/${entry}`, import.meta.url);
  if (existsSync(target)) return pathToFileURL(realpathSync(target)).href;
  process.stderr.write(`dist/${entry} is missing: building (npm run build)…\n`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const build = spawnSync(npm, ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (build.status !== 0 || !existsSync(target)) {
    process.stderr.write(`The build failed${build.error ? ` (${build.error.message})` : ''}: run "npm install && npm run build" in ${ROOT}\n`);
    process.exit(1);
  }
  return pathToFileURL(realpathSync(target)).href;
}
