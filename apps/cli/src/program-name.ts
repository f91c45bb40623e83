import { basename, isAbsolute, relative } from 'node:path';

/**
 * The command a person typed to run the CLI, for the commands its hints suggest: `agentrelay` once
 * installed or linked, `npm run cli --` through the clone's npm script, `npx agentrelay`, else the script's path
 * (`./bin/agentrelay.mjs`), since `agentrelay` is not on the PATH in a clone.
 */
export function programName(env: Record<string, string | undefined>, scriptPath: string | undefined, cwd: string): string {
  if (env.npm_lifecycle_event === 'cli') return 'npm run cli --';
  if (!scriptPath) return 'agentrelay';
  // An installed or `npm link`ed bin is a link named agentrelay on the PATH; `npx agentrelay` runs it through `npm exec`.
  if (basename(scriptPath) === 'agentrelay') return env.npm_command === 'exec' ? 'npx agentrelay' : 'agentrelay';
  const shown = relative(cwd, scriptPath);
  const path = shown.startsWith('..') || isAbsolute(shown) ? scriptPath : `./${shown}`;
  return scriptPath.endsWith('.mjs') ? path : `node ${path}`;
}
