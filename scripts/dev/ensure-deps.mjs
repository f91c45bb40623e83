// Installs dependencies when node_modules is missing or older than package-lock.json, with progress.
import { fileURLToPath } from 'node:url';
import { dependenciesStale, installDependencies } from './install.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
if (dependenciesStale(root)) {
  await installDependencies(root).catch((error) => {
    console.error(error.message);
    process.exit(1);
  });
}
