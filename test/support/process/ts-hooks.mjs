// Module hooks that let a child `node` process run the relay's TypeScript sources directly:
// `@app/<lib>` resolves to `libs/<lib>/src`, extensionless relative imports to `.ts` files, and
// `.ts` files are compiled with swc (legacy decorators with metadata, as in the tests).
import { transformSync } from '@swc/core';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SWC_OPTIONS } from '../swc-options.mjs';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function candidates(base) {
  return [base, `${base}.ts`, `${base}/index.ts`];
}

function firstFile(base) {
  return candidates(base).find((path) => existsSync(path) && statSync(path).isFile());
}

export async function resolve(specifier, context, nextResolve) {
  const alias = /^@app\/([a-z0-9-]+)(\/.*)?$/.exec(specifier);
  if (alias) {
    const found = firstFile(`${ROOT}libs/${alias[1]}/src${alias[2] ?? ''}`);
    if (found) return { url: pathToFileURL(found).href, shortCircuit: true, format: 'module' };
  }
  if ((specifier.startsWith('./') || specifier.startsWith('../')) && context.parentURL?.endsWith('.ts')) {
    const found = firstFile(fileURLToPath(new URL(specifier, context.parentURL)));
    if (found) return { url: pathToFileURL(found).href, shortCircuit: true, format: found.endsWith('.ts') ? 'module' : undefined };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.endsWith('.ts')) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const { code } = transformSync(readFileSync(path, 'utf8'), { ...SWC_OPTIONS, filename: path });
  return { format: 'module', source: code, shortCircuit: true };
}
