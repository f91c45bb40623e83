// Runs the TypeORM CLI against one service's data source (built first):
//   npm run migration:generate -- <tasks|directory|notifier> <Name>   writes apps/<service>/src/database/migrations/<timestamp>-<Name>.ts
//   npm run migration:show                                            lists applied and pending migrations of every schema
import { execFileSync, execSync } from 'node:child_process';

const SERVICES = ['directory', 'tasks', 'notifier'];
const [command, service, name] = process.argv.slice(2);

function typeorm(args) {
  try {
    execFileSync(process.execPath, ['node_modules/typeorm/cli.js', ...args], { stdio: 'inherit' });
  } catch (error) {
    process.exit(error.status ?? 1);
  }
}

execSync('npm run --silent build', { stdio: 'inherit' });
if (command === 'show') {
  for (const each of SERVICES) {
    console.log(`\n${each}:`);
    typeorm(['migration:show', '-d', `dist/apps/${each}/src/database/cli-data-source.js`]);
  }
} else if (command === 'generate' && SERVICES.includes(service) && /^[A-Z][A-Za-z0-9]+$/.test(name ?? '')) {
  typeorm(['migration:generate', '-p', '-d', `dist/apps/${service}/src/database/cli-data-source.js`, `apps/${service}/src/database/migrations/${name}`]);
  console.log(`\nNow add the new class to apps/${service}/src/database/migrations/index.ts (oldest first).`);
} else {
  console.error('usage: npm run migration:generate -- <directory|tasks|notifier> <PascalCaseName> | npm run migration:show');
  process.exit(2);
}
