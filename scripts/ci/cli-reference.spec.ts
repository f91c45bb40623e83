import { readFileSync } from 'node:fs';
import { CLI_README, currentReference, renderedReference, undocumentedOptions } from './cli-reference';

describe("the CLI README's command reference", () => {
  it('is the CLI’s own help, as scripts/ci/cli-reference.ts --write renders it', () => {
    const current = currentReference(readFileSync(CLI_README, 'utf8'));
    expect(current).not.toBeNull();
    // Stale: run node --import ./test/support/process/register-ts.mjs scripts/ci/cli-reference.ts --write
    expect(current).toBe(renderedReference());
  });

  it('names every option the CLI parses that its help leaves out', () => {
    expect(undocumentedOptions({ json: {}, 'api-key': {}, api: {}, 'webhook-url': {} }, 'Usage: --json --api-key <key> --webhook-url-x')).toEqual([
      '--api',
      '--webhook-url',
    ]);
  });

  it('refuses to render a help that leaves an option out', () => {
    expect(() => renderedReference('Usage: agentrelay <command>')).toThrow(/names none of --json/);
  });
});
