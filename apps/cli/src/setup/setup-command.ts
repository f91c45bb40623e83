import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { CliError, EXIT, usage } from '../cli-errors';
import type { HookClient } from '../hooks/hook-input';
import { DEFAULT_TOOL_PROMPT_TIMEOUT_MS } from '../hooks/tool-prompt-hook';
import { clientHookTimeoutSeconds, shellWord } from '../hooks/tool-prompt-config';
import { enableHooksFeature, TomlEditError, tomlString, upsertMcpServer } from './codex-toml';
import { enableMcpJsonServer, setupHookArgument, upsertHooks, upsertMcpJson, type CommandHook, type SetupHookEvent } from './json-config';

const OPTIONS = {
  project: { type: 'string' },
  'block-on-new': { type: 'boolean' },
  'relay-permissions': { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  url: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const SETUP_HELP = `Usage: agentrelay setup claude-code|codex [--project <dir>] [--url <relay url>] [--block-on-new] [--relay-permissions] [--dry-run]

Writes the agentrelay MCP server and the session hooks into the project's config (the current
directory unless --project), merged with what is there:
  claude-code  .mcp.json (mcpServers.agentrelay) and .claude/settings.json (hooks, and the server
               in enabledMcpjsonServers so it connects once the folder is trusted)
  codex        .codex/config.toml ([mcp_servers.agentrelay] with its tools approved, so codex exec
               can call them; [features] hooks) and .codex/hooks.json
--block-on-new also writes the Stop hook, which asks the agent to go on when a handoff arrived
during its turn. --relay-permissions also writes the PermissionRequest hook: while the session works
on the handoff named by AGENTRELAY_TASK_ID, a permission dialog becomes a question to the handoff's
sender (no answer within AGENTRELAY_TOOL_PROMPT_TIMEOUT, 5m, denies); without it the dialog shows
as before. --dry-run prints what would change and writes nothing. No API key is written:
the configs read AGENTRELAY_API_KEY from the environment the client runs in.
`;

/** Seconds the client gives one hook run (the hook itself gives up after AGENTRELAY_HOOK_TIMEOUT_MS). */
const CLIENT_HOOK_TIMEOUT_S = 10;
const SERVER_NAME = 'agentrelay';
/** Codex's approval for the server's tools: approved, so `codex exec` (which never asks) can call them. */
const CODEX_TOOLS_APPROVAL = 'approve';

interface PlannedFile {
  /** Relative to the project. */
  path: string;
  before: string | null;
  after: string;
  changes: string[];
}

/** The clone this CLI runs from: the directory holding bin/agentrelay.mjs. */
function cloneRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'bin', 'agentrelay.mjs'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new CliError('Cannot find bin/agentrelay.mjs above the running CLI: run setup from the agentrelay clone', EXIT.usage);
    dir = parent;
  }
}

async function readText(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new CliError(`Cannot read ${path}: ${(error as Error).message}`, EXIT.usage);
  }
}

function parseJsonFile(text: string | null, path: string): Record<string, unknown> {
  if (text === null || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(`${path} is not valid JSON (${(error as Error).message}): fix it, then run setup again. Nothing was written.`, EXIT.usage);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CliError(`${path} is not a JSON object. Nothing was written.`, EXIT.usage);
  return value as Record<string, unknown>;
}

function jsonPlan(path: string, before: string | null, original: Record<string, unknown>, value: Record<string, unknown>, changes: string[]): PlannedFile {
  const unchanged = before !== null && isDeepStrictEqual(original, value);
  return { path, before, after: unchanged ? before : `${JSON.stringify(value, null, 2)}\n`, changes: unchanged ? [] : changes };
}

async function writeAtomically(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, text);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** `agentrelay setup claude-code|codex`: plans every file first, writes only when all of them merged. */
export async function runSetupCommand(
  argv: string[],
  env: Record<string, string | undefined>,
  io: { stdout(text: string): void; stderr(text: string): void },
): Promise<number> {
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    } catch (error) {
      throw usage((error as Error).message);
    }
    const { values, positionals } = parsed;
    if (values.help) {
      io.stdout(SETUP_HELP);
      return EXIT.ok;
    }
    const client = positionals[0];
    if (client !== 'claude-code' && client !== 'codex')
      throw usage('Usage: agentrelay setup claude-code|codex [--project <dir>] [--block-on-new] [--relay-permissions] [--dry-run]');
    if (positionals.length > 1) throw usage(`Unexpected argument "${positionals[1]}".`);
    const project = resolve(values.project ?? process.cwd());
    if (!existsSync(project)) throw new CliError(`The project directory ${project} does not exist.`, EXIT.usage);
    const relayUrl = values.url ?? env.RELAY_URL ?? 'http://127.0.0.1:8080';
    const root = cloneRoot();
    const hookCommand = (event: SetupHookEvent): string =>
      [
        'node',
        join(root, 'bin', 'agentrelay.mjs'),
        'hook',
        setupHookArgument(event),
        '--client',
        client,
        '--url',
        relayUrl,
        ...(event === 'Stop' ? ['--block-on-new'] : []),
      ]
        .map(shellWord)
        .join(' ');
    const events: SetupHookEvent[] = [
      'SessionStart',
      'UserPromptSubmit',
      ...(values['block-on-new'] ? (['Stop'] as const) : []),
      ...(values['relay-permissions'] ? (['PermissionRequest'] as const) : []),
    ];
    const handlers = Object.fromEntries(
      events.map((event) => [
        event,
        {
          type: 'command',
          command: hookCommand(event),
          timeout: event === 'PermissionRequest' ? clientHookTimeoutSeconds(DEFAULT_TOOL_PROMPT_TIMEOUT_MS) : CLIENT_HOOK_TIMEOUT_S,
          ...(client === 'codex'
            ? { statusMessage: event === 'PermissionRequest' ? 'Asking the sender of the handoff on AgentRelay' : 'Checking AgentRelay for handoffs' }
            : {}),
        } satisfies CommandHook,
      ]),
    ) as Partial<Record<SetupHookEvent, CommandHook>>;
    const mcpBin = join(root, 'bin', 'agentrelay-mcp.mjs');

    const notes: string[] = [];
    if (values['relay-permissions']) {
      notes.push(
        'The PermissionRequest hook asks the sender of the handoff named by AGENTRELAY_TASK_ID (as the agent of AGENTRELAY_API_KEY) whenever the client would show a permission dialog; without AGENTRELAY_TASK_ID, or when the relay cannot be asked, the dialog shows as before.',
      );
    }
    const plans =
      client === 'claude-code' ? await planClaudeCode(project, relayUrl, mcpBin, handlers, notes) : await planCodex(project, relayUrl, mcpBin, handlers, notes);
    return await report(client, project, plans, notes, values['dry-run'] === true, io);
  } catch (error) {
    if (error instanceof CliError) {
      io.stderr(`agentrelay: ${error.message}\n`);
      return error.exitCode;
    }
    throw error;
  }
}

async function planClaudeCode(
  project: string,
  relayUrl: string,
  mcpBin: string,
  handlers: Partial<Record<SetupHookEvent, CommandHook>>,
  notes: string[],
): Promise<PlannedFile[]> {
  const mcpPath = '.mcp.json';
  const mcpBefore = await readText(join(project, mcpPath));
  const mcpDocument = parseJsonFile(mcpBefore, mcpPath);
  const mcp = upsertMcpJson(
    mcpDocument,
    SERVER_NAME,
    { command: 'node', args: [mcpBin], env: { RELAY_URL: relayUrl, AGENTRELAY_API_KEY: '${AGENTRELAY_API_KEY}' } },
    mcpPath,
  );
  notes.push(...mcp.notes);
  const settingsPath = join('.claude', 'settings.json');
  const settingsBefore = await readText(join(project, settingsPath));
  const settingsDocument = parseJsonFile(settingsBefore, settingsPath);
  const withHooks = guard(() => upsertHooks(settingsDocument, handlers, settingsPath));
  const enabled = guard(() => enableMcpJsonServer(withHooks.value, SERVER_NAME, settingsPath));
  const settings = { value: enabled.value, changes: [...withHooks.changes, ...enabled.changes] };
  notes.push(...enabled.notes);
  notes.push(
    'The API key is not in these files: Claude Code expands ${AGENTRELAY_API_KEY} in .mcp.json from its environment, and the hooks read AGENTRELAY_API_KEY from it.',
  );
  return [
    jsonPlan(mcpPath, mcpBefore, mcpDocument, mcp.value, mcp.changes),
    jsonPlan(settingsPath, settingsBefore, settingsDocument, settings.value, settings.changes),
  ];
}

async function planCodex(
  project: string,
  relayUrl: string,
  mcpBin: string,
  handlers: Partial<Record<SetupHookEvent, CommandHook>>,
  notes: string[],
): Promise<PlannedFile[]> {
  const configPath = join('.codex', 'config.toml');
  const configBefore = await readText(join(project, configPath));
  const withServer = guard(
    () =>
      upsertMcpServer(configBefore ?? '', SERVER_NAME, {
        command: 'node',
        args: [mcpBin],
        env: { RELAY_URL: relayUrl },
        envVars: ['AGENTRELAY_API_KEY'],
        defaults: { default_tools_approval_mode: tomlString(CODEX_TOOLS_APPROVAL) },
      }),
    configPath,
  );
  const withFeature = guard(() => enableHooksFeature(withServer.text), configPath);
  notes.push(...withServer.notes, ...withFeature.notes);
  const approvalKept = withServer.notes.some((note) => note.includes('default_tools_approval_mode'));
  notes.push(
    approvalKept
      ? `codex exec (approval policy "never") runs only read-only MCP tools unless they are approved: without default_tools_approval_mode = "${CODEX_TOOLS_APPROVAL}", get_thread and reply fail there with "MCP tool call requires approval".`
      : `The relay's MCP tools are approved for this server (default_tools_approval_mode = "${CODEX_TOOLS_APPROVAL}"), so get_thread and reply also run in codex exec, which never asks.`,
  );
  const hooksPath = join('.codex', 'hooks.json');
  const hooksBefore = await readText(join(project, hooksPath));
  const hooksDocument = parseJsonFile(hooksBefore, hooksPath);
  const hooks = guard(() => upsertHooks(hooksDocument, handlers, hooksPath));
  notes.push(
    'The API key is not in these files: Codex passes AGENTRELAY_API_KEY from its environment to the MCP server (env_vars), and the hooks read it from the same environment.',
    `Codex loads .codex/ only in a trusted project: trust it when codex asks, or, without a terminal, add to $CODEX_HOME/config.toml (default ~/.codex/config.toml):\n  [projects.${tomlString(project)}]\n  trust_level = "trusted"`,
  );
  const changed = hooks.changes.filter((change) => change.startsWith('updated hooks.'));
  if (changed.length > 0) {
    notes.push(
      `Changed hook commands (${changed.map((change) => change.replace(/^updated /, '')).join('; ')}): Codex trusts a hook by its exact definition, so it skips these, silently, until you review and trust them again (/hooks in codex).`,
    );
  } else if (hooks.changes.length > 0) {
    notes.push('Codex runs new hooks only once you review and trust them: start codex in the project and open /hooks.');
  }
  if (hooks.changes.length > 0) {
    notes.push(
      'Without a terminal (codex exec, CI): codex exec --dangerously-bypass-hook-trust runs the hooks of that one run unreviewed; use it only where you checked .codex/hooks.json yourself. A worker (agentrelay worker) needs no hooks: it gives the handoff on stdin.',
    );
  }
  const configChanges = [...withServer.changes, ...withFeature.changes];
  return [
    { path: configPath, before: configBefore, after: configChanges.length ? withFeature.text : (configBefore ?? ''), changes: configChanges },
    jsonPlan(hooksPath, hooksBefore, hooksDocument, hooks.value, hooks.changes),
  ];
}

function guard<T>(edit: () => T, file?: string): T {
  try {
    return edit();
  } catch (error) {
    const where = file ? `${file}: ` : '';
    if (error instanceof TomlEditError) throw new CliError(`${where}${error.message}. Nothing was written.`, EXIT.usage);
    throw new CliError(`${where}${(error as Error).message}. Nothing was written.`, EXIT.usage);
  }
}

async function report(
  client: HookClient,
  project: string,
  plans: PlannedFile[],
  notes: string[],
  dryRun: boolean,
  io: { stdout(text: string): void },
): Promise<number> {
  const lines: string[] = [`${dryRun ? 'Dry run: ' : ''}agentrelay setup ${client} in ${project}`];
  for (const plan of plans) {
    if (plan.changes.length === 0) {
      lines.push(`  ${plan.path}: unchanged`);
      continue;
    }
    lines.push(`  ${plan.path}: ${dryRun ? 'would ' : ''}${plan.before === null ? 'create' : 'update'} (${plan.changes.join('; ')})`);
  }
  if (!dryRun) {
    for (const plan of plans.filter((entry) => entry.changes.length > 0)) await writeAtomically(join(project, plan.path), plan.after);
  } else {
    for (const plan of plans.filter((entry) => entry.changes.length > 0)) lines.push('', `--- ${plan.path} (as it would be written)`, plan.after.trimEnd());
    lines.push('');
  }
  lines.push(...notes.map((note) => `Note: ${note}`));
  io.stdout(`${lines.join('\n')}\n`);
  return EXIT.ok;
}
