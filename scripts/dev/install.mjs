// Installs the dependencies (`npm ci`) when node_modules is missing or older than package-lock.json,
// showing how far it got: packages in place of those the lock file lists, and the time spent. Uses
// nothing but Node's own modules (it runs before anything is installed).
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';

const MARKER = join('node_modules', '.package-lock.json');
/** How often a progress line is written when the output is not a terminal (a terminal's line is redrawn every second). */
const LOG_EVERY_MS = 15_000;

export function dependenciesStale(root) {
  const marker = join(root, MARKER);
  return !existsSync(marker) || statSync(join(root, 'package-lock.json')).mtimeMs > statSync(marker).mtimeMs;
}

/** The top-level packages the lock file installs (`node_modules/<name>`, scoped ones included). */
export function lockedTopLevelPackages(root) {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  return Object.keys(lock.packages ?? {})
    .filter((path) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(path))
    .map((path) => path.slice('node_modules/'.length));
}

/** How many of `packages` have a folder in node_modules now. */
export function installedCount(root, packages) {
  const present = new Set();
  const base = join(root, 'node_modules');
  let entries;
  try {
    entries = readdirSync(base);
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (!entry.startsWith('@')) {
      present.add(entry);
      continue;
    }
    try {
      for (const scoped of readdirSync(join(base, entry))) present.add(`${entry}/${scoped}`);
    } catch {
      // A scope folder removed meanwhile (npm ci empties node_modules first).
    }
  }
  return packages.filter((name) => present.has(name)).length;
}

export function progressLine(done, total, seconds) {
  return `Installing dependencies (npm ci): ${done} of ${total} packages, ${seconds} s`;
}

/**
 * Runs `npm ci` with its output shown and a progress line beside it. `onChild` receives the npm
 * process (so that a signal can stop it); resolves when it succeeded, rejects otherwise.
 */
export function installDependencies(root, { onChild = () => undefined, output = process.stdout } = {}) {
  const modules = join(root, 'node_modules');
  // npm ci empties the folder a link points to: an install shared by several clones is not replaced from here.
  if (existsSync(modules) && lstatSync(modules).isSymbolicLink()) {
    return Promise.reject(
      new Error(`node_modules links to ${realpathSync(modules)}, which is older than package-lock.json: install there (npm ci), not through the link`),
    );
  }
  const packages = lockedTopLevelPackages(root);
  const startedAt = Date.now();
  const tty = Boolean(output.isTTY);
  let shown = false;
  const seconds = () => Math.round((Date.now() - startedAt) / 1000);
  const clear = () => {
    if (tty && shown) output.write('\r\x1b[2K');
    shown = false;
  };
  const show = () => {
    const line = progressLine(installedCount(root, packages), packages.length, seconds());
    if (tty) {
      clear();
      output.write(line);
      shown = true;
    } else {
      output.write(`${line}\n`);
    }
  };
  output.write(`Installing dependencies (npm ci, ${packages.length} packages; a first install takes a minute or two)…\n`);
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    onChild(child);
    for (const stream of [child.stdout, child.stderr]) {
      stream.on('data', (chunk) => {
        clear();
        (stream === child.stderr ? process.stderr : output).write(chunk);
      });
    }
    const timer = setInterval(show, tty ? 1000 : LOG_EVERY_MS);
    child.once('error', (error) => {
      clearInterval(timer);
      clear();
      reject(new Error(`npm ci could not start: ${error.message}`));
    });
    child.once('exit', (code, signal) => {
      clearInterval(timer);
      clear();
      if (code === 0) {
        output.write(`Dependencies installed in ${seconds()} s.\n`);
        resolve();
      } else {
        reject(new Error(`npm ci failed (${signal ? `signal ${signal}` : `exit code ${code}`})`));
      }
    });
  });
}
