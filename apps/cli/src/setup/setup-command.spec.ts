import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSetupCommand } from './setup-command';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function setup(args: string[], env: Record<string, string> = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runSetupCommand(args, env, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
  return { code, stdout, stderr };
}

interface HooksFile {
  permissions?: unknown;
  enabledMcpjsonServers?: string[];
  hooks: Record<string, Array<{ matcher?: string; hooks: Array<{ type: string; command: string; timeout?: number; statusMessage?: string }> }>>;
}
interface McpFile {
  mcpServers: Record<string, unknown>;
}
interface CodexConfig {
  model: string;
  mcp_servers: Record<string, unknown>;
  features: Record<string, boolean>;
}

const readJson = async <T>(path: string): Promise<T> => JSON.parse(await readFile(path, 'utf8')) as T;

/** Every file under a directory with its content: what a run wrote, or did not. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      files[path.slice(dir.length + 1)] = `${(await stat(path)).mtimeMs}:${await readFile(path, 'utf8')}`;
    }
  }
  return files;
}

/** Loads TOML with Python's standard tomllib: an independent parser checks what setup wrote. */
function loadToml(path: string): CodexConfig {
  return JSON.parse(
    execFileSync('python3', ['-c', 'import json,sys,tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], "rb"))))', path], { encoding: 'utf8' }),
  );
}

describe('agentrelay setup', () => {
  let project: string;

  beforeEach(async () => {
    project = await mkdtemp(join(tmpdir(), 'agentrelay-setup-'));
  });

  afterEach(async () => {
    await rm(project, { recursive: true, force: true });
  });

  it('claude-code: merges the MCP server and the hooks into existing files, keeping their other entries, and a second run changes nothing', async () => {
    await writeFile(join(project, '.mcp.json'), JSON.stringify({ mcpServers: { github: { command: 'gh-mcp', args: [] } } }));
    await mkdir(join(project, '.claude'));
    await writeFile(
      join(project, '.claude', 'settings.json'),
      JSON.stringify({
        permissions: { allow: ['Bash(npm test)'] },
        hooks: {
          UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'echo mine' }] }],
          PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'lint' }] }],
        },
      }),
    );

    const first = await setup(['claude-code', '--project', project, '--url', 'http://127.0.0.1:9000']);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('.mcp.json: update (added mcpServers.agentrelay)');
    expect(first.stdout).toContain('.claude/settings.json: update (added hooks.SessionStart (agentrelay hook session-start); added hooks.UserPromptSubmit');
    expect(first.stdout).toContain('enabled the agentrelay MCP server (enabledMcpjsonServers)');
    expect(first.stdout).toContain('${AGENTRELAY_API_KEY}');

    const mcp = await readJson<McpFile>(join(project, '.mcp.json'));
    expect(mcp.mcpServers.github).toEqual({ command: 'gh-mcp', args: [] });
    expect(mcp.mcpServers.agentrelay).toEqual({
      command: 'node',
      args: [expect.stringMatching(/\/bin\/agentrelay-mcp\.mjs$/)],
      env: { RELAY_URL: 'http://127.0.0.1:9000', AGENTRELAY_API_KEY: '${AGENTRELAY_API_KEY}' },
    });
    const settings = await readJson<HooksFile>(join(project, '.claude', 'settings.json'));
    expect(settings.permissions).toEqual({ allow: ['Bash(npm test)'] });
    expect(settings.enabledMcpjsonServers).toEqual(['agentrelay']);
    expect(settings.hooks.PreToolUse).toEqual([{ matcher: 'Bash', hooks: [{ type: 'command', command: 'lint' }] }]);
    expect(settings.hooks.UserPromptSubmit[0]).toEqual({ hooks: [{ type: 'command', command: 'echo mine' }] });
    expect(settings.hooks.UserPromptSubmit[1].hooks[0]).toEqual({
      type: 'command',
      command: expect.stringMatching(/^node \S+\/bin\/agentrelay\.mjs hook user-prompt-submit --client claude-code --url http:\/\/127\.0\.0\.1:9000$/),
      timeout: 10,
    });
    expect(settings.hooks.SessionStart[0].hooks[0].command).toMatch(/ hook session-start --client claude-code /);
    expect(settings.hooks.Stop).toBeUndefined();

    const before = await snapshot(project);
    const second = await setup(['claude-code', '--project', project, '--url', 'http://127.0.0.1:9000']);
    expect(second.stdout).toContain('.mcp.json: unchanged');
    expect(second.stdout).toContain('.claude/settings.json: unchanged');
    expect(await snapshot(project)).toEqual(before);
  });

  it('claude-code --block-on-new adds the Stop hook; a literal key in .mcp.json gives way to ${AGENTRELAY_API_KEY}', async () => {
    await writeFile(
      join(project, '.mcp.json'),
      JSON.stringify({ mcpServers: { agentrelay: { command: 'node', args: ['old.mjs'], env: { AGENTRELAY_API_KEY: 'ah_live_secret' } } } }),
    );
    const run = await setup(['claude-code', '--project', project, '--block-on-new']);
    expect(run.stdout).toContain('replaced the literal AGENTRELAY_API_KEY');
    expect(await readFile(join(project, '.mcp.json'), 'utf8')).not.toContain('ah_live_secret');
    const settings = await readJson<HooksFile>(join(project, '.claude', 'settings.json'));
    expect(settings.hooks.Stop[0].hooks[0].command).toMatch(/ hook stop --client claude-code --url \S+ --block-on-new$/);
  });

  it('--relay-permissions adds the PermissionRequest hook (agentrelay hook permission) to both clients, once', async () => {
    const claude = await setup(['claude-code', '--project', project, '--relay-permissions', '--url', 'http://127.0.0.1:9000']);
    expect(claude.code).toBe(0);
    expect(claude.stdout).toContain('The PermissionRequest hook asks the sender of the handoff named by AGENTRELAY_TASK_ID');
    const settings = await readJson<HooksFile>(join(project, '.claude', 'settings.json'));
    expect(settings.hooks.PermissionRequest).toEqual([
      { hooks: [{ type: 'command', command: expect.stringMatching(/ hook permission --client claude-code --url http:\/\/127\.0\.0\.1:9000$/), timeout: 360 }] },
    ]);
    expect(Object.keys(settings.hooks).sort()).toEqual(['PermissionRequest', 'SessionStart', 'UserPromptSubmit']);
    const again = await setup(['claude-code', '--project', project, '--relay-permissions', '--url', 'http://127.0.0.1:9000']);
    expect(again.stdout).toContain('.claude/settings.json: unchanged');

    await setup(['codex', '--project', project, '--relay-permissions']);
    const hooks = await readJson<HooksFile>(join(project, '.codex', 'hooks.json'));
    expect(hooks.hooks.PermissionRequest[0].hooks[0]).toEqual({
      type: 'command',
      command: expect.stringMatching(/ hook permission --client codex --url \S+$/),
      timeout: 360,
      statusMessage: 'Asking the sender of the handoff on AgentRelay',
    });
  });

  it('codex: merges [mcp_servers.agentrelay] and [features] into config.toml and the hooks into hooks.json, keeping the rest; a second run changes nothing', async () => {
    await mkdir(join(project, '.codex'));
    const config =
      '# my settings\nmodel = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\nargs = [\n  "--fast", # keep\n]\n\n[features]\nweb_search = true\n';
    await writeFile(join(project, '.codex', 'config.toml'), config);
    await writeFile(
      join(project, '.codex', 'hooks.json'),
      JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }] } }),
    );

    const first = await setup(['codex', '--project', project, '--block-on-new', '--url', 'http://127.0.0.1:9000']);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('.codex/config.toml: update (added [mcp_servers.agentrelay]; set features.hooks = true)');
    expect(first.stdout).toContain('trust');

    const written = await readFile(join(project, '.codex', 'config.toml'), 'utf8');
    expect(written.startsWith('# my settings\nmodel = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\nargs = [\n  "--fast", # keep\n]\n')).toBe(true);
    const toml = loadToml(join(project, '.codex', 'config.toml'));
    expect(toml.model).toBe('o3');
    expect(toml.mcp_servers.docs).toEqual({ command: 'docs-mcp', args: ['--fast'] });
    expect(toml.mcp_servers.agentrelay).toEqual({
      command: 'node',
      args: [expect.stringMatching(/\/bin\/agentrelay-mcp\.mjs$/)],
      env: { RELAY_URL: 'http://127.0.0.1:9000' },
      env_vars: ['AGENTRELAY_API_KEY'],
      default_tools_approval_mode: 'approve',
    });
    expect(first.stdout).toContain('so get_thread and reply also run in codex exec');
    expect(first.stdout).toContain(`[projects.${JSON.stringify(project)}]\n  trust_level = "trusted"`);
    expect(first.stdout).toContain('Codex runs new hooks only once you review and trust them');
    expect(toml.features).toEqual({ web_search: true, hooks: true });
    expect(written).not.toMatch(/ah_live_/);

    const hooks = await readJson<HooksFile>(join(project, '.codex', 'hooks.json'));
    expect(hooks.hooks.Stop[0]).toEqual({ hooks: [{ type: 'command', command: 'notify-send done' }] });
    expect(hooks.hooks.Stop[1].hooks[0]).toEqual({
      type: 'command',
      command: expect.stringMatching(/ hook stop --client codex --url http:\/\/127\.0\.0\.1:9000 --block-on-new$/),
      timeout: 10,
      statusMessage: 'Checking AgentRelay for handoffs',
    });
    expect(hooks.hooks.SessionStart[0].hooks[0].command).toMatch(/ hook session-start --client codex /);
    expect(hooks.hooks.UserPromptSubmit[0].hooks[0].command).toMatch(/ hook user-prompt-submit --client codex /);

    const before = await snapshot(project);
    const second = await setup(['codex', '--project', project, '--block-on-new', '--url', 'http://127.0.0.1:9000']);
    expect(second.stdout).toContain('.codex/config.toml: unchanged');
    expect(second.stdout).toContain('.codex/hooks.json: unchanged');
    expect(await snapshot(project)).toEqual(before);
  });

  it('claude-code: adds agentrelay to enabledMcpjsonServers beside the names there; a disabled agentrelay stays disabled, with a note', async () => {
    await mkdir(join(project, '.claude'));
    const settingsFile = join(project, '.claude', 'settings.json');
    await writeFile(settingsFile, JSON.stringify({ enabledMcpjsonServers: ['github'] }));
    await setup(['claude-code', '--project', project]);
    expect((await readJson<HooksFile>(settingsFile)).enabledMcpjsonServers).toEqual(['github', 'agentrelay']);

    await writeFile(settingsFile, JSON.stringify({ disabledMcpjsonServers: ['agentrelay'] }));
    const disabled = await setup(['claude-code', '--project', project]);
    expect(disabled.stdout).toContain('lists agentrelay in disabledMcpjsonServers');

    await writeFile(settingsFile, JSON.stringify({ enableAllProjectMcpServers: true }));
    await setup(['claude-code', '--project', project]);
    expect((await readJson<HooksFile>(settingsFile)).enabledMcpjsonServers).toBeUndefined();

    await writeFile(settingsFile, JSON.stringify({ enabledMcpjsonServers: 'agentrelay' }));
    const wrong = await setup(['claude-code', '--project', project]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('"enabledMcpjsonServers" is not an array of names');
  });

  it('codex: keeps a tools approval the person set, saying what it costs; warns that a changed hook command needs review again', async () => {
    await mkdir(join(project, '.codex'));
    await writeFile(
      join(project, '.codex', 'config.toml'),
      '[mcp_servers.agentrelay]\ncommand = "node"\nargs = ["old.mjs"]\ndefault_tools_approval_mode = "prompt"\n',
    );
    const first = await setup(['codex', '--project', project, '--url', 'http://127.0.0.1:9000']);
    expect(first.code).toBe(0);
    expect(loadToml(join(project, '.codex', 'config.toml')).mcp_servers.agentrelay).toEqual(expect.objectContaining({ default_tools_approval_mode: 'prompt' }));
    expect(first.stdout).toContain('kept mcp_servers.agentrelay.default_tools_approval_mode = "prompt" (setup writes "approve")');
    expect(first.stdout).toContain('get_thread and reply fail there with "MCP tool call requires approval"');
    expect(first.stdout).not.toContain('Changed hook commands');

    // Another --url (or a moved clone) changes the hook commands: Codex no longer trusts them.
    const moved = await setup(['codex', '--project', project, '--url', 'http://127.0.0.1:9001']);
    expect(moved.stdout).toContain('.codex/hooks.json: update (updated hooks.SessionStart');
    expect(moved.stdout).toMatch(/Changed hook commands \(hooks\.SessionStart .*hooks\.UserPromptSubmit .*\): Codex trusts a hook by its exact definition/);
    expect(moved.stdout).toContain('review and trust them again (/hooks in codex)');
    expect(moved.stdout).toContain('--dangerously-bypass-hook-trust');

    const again = await setup(['codex', '--project', project, '--url', 'http://127.0.0.1:9001']);
    expect(again.stdout).toContain('.codex/hooks.json: unchanged');
    expect(again.stdout).not.toContain('Changed hook commands');
  });

  it('--dry-run prints what it would write and writes nothing', async () => {
    await writeFile(join(project, '.mcp.json'), '{"mcpServers":{}}');
    const before = await snapshot(project);
    const claude = await setup(['claude-code', '--project', project, '--dry-run']);
    const codex = await setup(['codex', '--project', project, '--dry-run']);
    expect(claude.stdout).toContain('.mcp.json: would update (added mcpServers.agentrelay)');
    expect(claude.stdout).toContain('--- .claude/settings.json (as it would be written)');
    expect(codex.stdout).toContain('.codex/config.toml: would create');
    expect(codex.stdout).toContain('[mcp_servers.agentrelay]');
    expect(await snapshot(project)).toEqual(before);
  });

  it('writes nothing when one of the files cannot be merged, and says which', async () => {
    await mkdir(join(project, '.claude'));
    await writeFile(join(project, '.claude', 'settings.json'), '{ not json');
    const before = await snapshot(project);
    const run = await setup(['claude-code', '--project', project]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('.claude/settings.json is not valid JSON');
    expect(run.stderr).toContain('Nothing was written');
    expect(await snapshot(project)).toEqual(before);

    await mkdir(join(project, '.codex'));
    await writeFile(join(project, '.codex', 'config.toml'), '[mcp_servers]\nagentrelay = { command = "x" }\n');
    const codex = await setup(['codex', '--project', project]);
    expect(codex.code).toBe(2);
    expect(codex.stderr).toContain('in a form setup does not edit');
    expect(await readdir(join(project, '.codex'))).toEqual(['config.toml']);
  });
});
