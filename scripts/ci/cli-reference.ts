/**
 * The command reference of apps/cli/README.md, rendered from the CLI itself: its help text
 * (`agentrelay --help`) between the README's `cli-reference` markers. Every option the CLI parses
 * must appear in that help, so a flag cannot be added without being documented.
 *
 * `--write` rewrites the section; without it the script exits 1 when the README is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { OPTIONS, USAGE } from '../../apps/cli/src/cli';

export const CLI_README = 'apps/cli/README.md';
const START = '<!-- cli-reference:start -->';
const END = '<!-- cli-reference:end -->';

/** The options the CLI parses that its help never names (`--json` for `json`). */
export function undocumentedOptions(options: Record<string, unknown>, usage: string): string[] {
  return Object.keys(options)
    .filter((name) => !new RegExp(`--${name}(?![a-z-])`).test(usage))
    .map((name) => `--${name}`);
}

/** The section as the CLI's help makes it. */
export function renderedReference(usage: string = USAGE): string {
  const missing = undocumentedOptions(OPTIONS, usage);
  if (missing.length > 0) throw new Error(`The CLI's help names none of ${missing.join(', ')}: add them to USAGE in apps/cli/src/cli.ts`);
  return [START, '<!-- generated: scripts/ci/cli-reference.ts -->', '```text', usage.trimEnd(), '```', END].join('\n');
}

/** The README's section as it stands, or null when it has no markers. */
export function currentReference(readme: string): string | null {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  return start < 0 || end < start ? null : readme.slice(start, end + END.length);
}

if (process.argv[1] && /cli-reference\.[jt]s$/.test(process.argv[1])) {
  const readme = readFileSync(CLI_README, 'utf8');
  const current = currentReference(readme);
  if (current === null) {
    console.error(`[cli-reference] ${CLI_README} has no ${START} … ${END} section`);
    process.exit(1);
  }
  const rendered = renderedReference();
  if (process.argv.includes('--write')) {
    writeFileSync(CLI_README, readme.replace(current, rendered));
    console.log(`[cli-reference] wrote the command reference of ${CLI_README}`);
  } else if (current !== rendered) {
    console.error(`[cli-reference] ${CLI_README} is stale: run node --import ./test/support/process/register-ts.mjs scripts/ci/cli-reference.ts --write`);
    process.exit(1);
  } else console.log(`[cli-reference] ${CLI_README} matches the CLI's help`);
}
