import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const REGISTER_TS = fileURLToPath(new URL('./support/process/register-ts.mjs', import.meta.url));
const run = promisify(execFile);

/** `agentrelay setup …` as a person runs it: a real process, nothing in its environment but PATH. */
async function setup(args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', REGISTER_TS, 'apps/cli/src/main.ts', 'setup', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '' },
  });
  return stdout;
}

/** TOML read by Python's tomllib, a parser independent of the one that wrote it. */
async function loadToml(path: string): Promise<Record<string, Record<string, Record<string, unknown>>>> {
  const { stdout } = await run('python3', ['-c', 'import json,sys,tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], "rb"))))', path]);
  return JSON.parse(stdout) as Record<string, Record<string, Record<string, unknown>>>;
}

/** A real process per run: a loaded machine starts each slowly. */
const PROCESS_TEST_TIMEOUT_MS = 120_000;

describe('agentrelay setup (the CLI process)', () => {
  let project: string;

  beforeEach(async () => {
    project = await mkdtemp(join(tmpdir(), 'agentrelay-setup-e2e-'));
  });

  afterEach(async () => {
    await rm(project, { recursive: true, force: true });
  });

  it(
    'claude-code: the server of .mcp.json is enabled in .claude/settings.json, so Claude Code connects it once the folder is trusted',
    async () => {
      const stdout = await setup(['claude-code', '--project', project, '--url', 'http://127.0.0.1:9000']);
      expect(stdout).toContain('enabled the agentrelay MCP server (enabledMcpjsonServers)');
      const mcp = JSON.parse(await readFile(join(project, '.mcp.json'), 'utf8')) as { mcpServers: Record<string, { args: string[] }> };
      const settings = JSON.parse(await readFile(join(project, '.claude', 'settings.json'), 'utf8')) as { enabledMcpjsonServers: string[] };
      expect(settings.enabledMcpjsonServers).toEqual(Object.keys(mcp.mcpServers));
      expect(existsSync(mcp.mcpServers.agentrelay.args[0])).toBe(true);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'codex: the relay tools are approved for codex exec; the trust a project and its hooks need is printed',
    async () => {
      const stdout = await setup(['codex', '--project', project]);
      const toml = await loadToml(join(project, '.codex', 'config.toml'));
      expect(toml.mcp_servers.agentrelay.default_tools_approval_mode).toBe('approve');
      expect(existsSync((toml.mcp_servers.agentrelay.args as string[])[0])).toBe(true);
      expect(stdout).toContain('trust_level = "trusted"');
      expect(stdout).toContain('/hooks');

      const moved = await setup(['codex', '--project', project, '--url', 'http://127.0.0.1:9001']);
      expect(moved).toContain('Changed hook commands');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
