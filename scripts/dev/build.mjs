// `npm run build`: compiles the services, the CLI and the MCP server (tsc, then tsc-alias) and the
// console (Vite) into `.build/<digest of the sources>/` and points `dist` at it in one rename, so
// that a hook or MCP server an agent starts meanwhile never sees a half-built tree; unchanged sources
// reuse their build (scripts/dev/dist-swap.mjs). `--in-place` builds straight into a plain `dist/`
// (container images, where nothing runs during the build).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publishBuild, sourceDigest } from './dist-swap.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const bin = (name) => join(ROOT, 'node_modules', '.bin', name);

function step(command, args) {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) {
    throw new Error(`${[command, ...args].join(' ')} failed${result.error ? ` (${result.error.message})` : ` with exit code ${result.status}`}`);
  }
}

/** The whole build into `outDir` (relative to the root, or absolute). */
function buildInto(outDir) {
  step(bin('tsc'), ['-p', 'tsconfig.build.json', '--outDir', outDir]);
  step(bin('tsc-alias'), ['-p', 'tsconfig.build.json', '--outDir', outDir]);
  step(bin('vite'), ['build', '--config', 'apps/console/vite.config.ts', '--logLevel', 'warn', '--outDir', join(outDir, 'console'), '--emptyOutDir']);
}

try {
  if (process.argv.includes('--in-place')) {
    buildInto(join(ROOT, 'dist'));
  } else {
    const id = sourceDigest(ROOT);
    await publishBuild(ROOT, id, (outDir) => buildInto(outDir), { log: (line) => console.error(line) });
  }
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
