/**
 * Fails on an import cycle among the TypeScript files of apps/ and libs/ (type-only imports
 * included: erased at build, they still tie the files together; docs/decisions/0011). Prints each
 * cycle's files and one path around it; exits 1 if there is one.
 *
 *   node --import ./test/support/process/register-ts.mjs scripts/ci/check-import-cycles.ts
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findImportCycles } from './import-cycles';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const { fileCount, cycles } = findImportCycles(ROOT, ['apps', 'libs']);
for (const cycle of cycles) {
  console.error(`import cycle among ${cycle.files.length} files: ${cycle.files.join(', ')}`);
  console.error(`  for example: ${cycle.example.join(' -> ')}`);
}
console.log(`${fileCount} files, ${cycles.length} import cycle${cycles.length === 1 ? '' : 's'}`);
if (cycles.length > 0) process.exitCode = 1;
