import { run } from './cli';

async function usageError(argv: string[], program?: string): Promise<{ code: number; lines: string[] }> {
  let stderr = '';
  const code = await run(argv, {}, { stdout: () => undefined, stderr: (text) => (stderr += text), ...(program ? { program } : {}) });
  return { code, lines: stderr.trimEnd().split('\n') };
}

describe('the usage hint of a usage error', () => {
  it('names the command the person typed (npm run cli -- in a clone)', async () => {
    const { code, lines } = await usageError(['inbox', '--frobnicate'], 'npm run cli --');
    expect(code).toBe(2);
    expect(lines[0]).toMatch(/^agentrelay: Unknown option '--frobnicate'/);
    expect(lines.at(-1)).toBe('Run "npm run cli -- --help" for usage.');
  });

  it('names agentrelay when the CLI is installed', async () => {
    const { lines } = await usageError(['inbox', '--frobnicate']);
    expect(lines.at(-1)).toBe('Run "agentrelay --help" for usage.');
  });
});
