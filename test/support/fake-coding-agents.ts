import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REGISTER_TS = fileURLToPath(new URL('./process/register-ts.mjs', import.meta.url));

/**
 * Stands in for `claude -p --settings "$AGENTRELAY_CLAUDE_SETTINGS"`: reads the settings file the
 * worker wrote, and before each tool of its plan runs the PreToolUse command hooks exactly as
 * Claude Code does (through the shell, the documented hook JSON on stdin, within the hook's
 * timeout) and obeys the output: `permissionDecision` allow runs the tool, deny does not (the
 * reason goes back to the model); no decision leaves it to its own rules, under which `claude -p`
 * runs only read-only tools. It prints what happened to each tool.
 */
export const FAKE_CLAUDE = `import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
const settings = JSON.parse(readFileSync(process.env.AGENTRELAY_CLAUDE_SETTINGS, 'utf8'));
const plan = JSON.parse(process.env.TOOL_PLAN);
const READ_ONLY = ['Read', 'Glob', 'Grep', 'LS'];
const lines = [];
for (const [index, call] of plan.entries()) {
  let decision = null;
  let reason = '';
  for (const group of settings.hooks.PreToolUse ?? []) {
    if (group.matcher && group.matcher !== '*' && !new RegExp('^(?:' + group.matcher + ')$').test(call.tool_name)) continue;
    for (const hook of group.hooks) {
      const input = {
        session_id: 'fake-session',
        transcript_path: '/tmp/fake-session.jsonl',
        cwd: process.cwd(),
        permission_mode: 'default',
        hook_event_name: 'PreToolUse',
        tool_name: call.tool_name,
        tool_input: call.tool_input,
        tool_use_id: 'toolu_' + index,
      };
      const stdout = execFileSync('/bin/sh', ['-c', hook.command], { input: JSON.stringify(input), timeout: hook.timeout * 1000, encoding: 'utf8' });
      if (stdout.trim() === '') continue;
      const output = JSON.parse(stdout).hookSpecificOutput;
      if (output.hookEventName !== 'PreToolUse') throw new Error('hook answered for ' + output.hookEventName);
      decision = output.permissionDecision;
      reason = output.permissionDecisionReason ?? '';
    }
  }
  if (decision === null) decision = READ_ONLY.includes(call.tool_name) ? 'allow' : 'deny';
  lines.push(call.tool_name + ' ' + JSON.stringify(call.tool_input) + ': ' + (decision === 'allow' ? 'ran' : 'denied (' + reason + ')'));
}
console.log(lines.join('\\n'));
`;

/**
 * Stands in for `codex exec -c "$AGENTRELAY_CODEX_HOOKS"`: takes the hook from the inline
 * `hooks.PreToolUse` table of its -c override and runs it before each tool with Codex's hook JSON
 * (with `turn_id`); a `permissionDecision` deny blocks the tool, anything else leaves it to
 * its approval policy (never, in exec) and sandbox, so it runs.
 */
export const FAKE_CODEX = `import { execFileSync } from 'node:child_process';
const override = process.argv[process.argv.indexOf('-c') + 1];
if (!override.startsWith('hooks.PreToolUse=[')) throw new Error('not a PreToolUse override: ' + override);
const command = JSON.parse(/command=("(?:[^"\\\\]|\\\\.)*")/.exec(override)[1]);
const timeout = Number(/timeout=(\\d+)/.exec(override)[1]);
const plan = JSON.parse(process.env.TOOL_PLAN);
const lines = [];
for (const [index, call] of plan.entries()) {
  const input = {
    session_id: 'codex-session',
    turn_id: 'turn-' + index,
    transcript_path: null,
    cwd: process.cwd(),
    model: 'gpt-5-codex',
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: call.tool_name,
    tool_input: call.tool_input,
    tool_use_id: 'call_' + index,
  };
  const stdout = execFileSync('/bin/sh', ['-c', command], { input: JSON.stringify(input), timeout: timeout * 1000, encoding: 'utf8' });
  const output = stdout.trim() === '' ? {} : JSON.parse(stdout).hookSpecificOutput;
  const blocked = output.permissionDecision === 'deny';
  lines.push(call.tool_name + ': ' + (blocked ? 'blocked (' + output.permissionDecisionReason + ')' : 'ran'));
}
console.log(lines.join('\\n'));
`;

/** One `agentrelay worker` process, its stderr kept for the failure messages. */
export class WorkerProcess {
  stderr = '';
  readonly exited: Promise<number | null>;

  constructor(readonly child: ChildProcess) {
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')));
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  }

  /** SIGTERM, then the exit code once it stopped. */
  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }
}

/** `agentrelay worker --exec <command> <args>` as the agent of `apiKey`; `plan` is the fake coding agent's list of tool calls (TOOL_PLAN). */
export function startWorker(relayUrl: string, apiKey: string, command: string, args: string[], plan: unknown[]): WorkerProcess {
  const child = spawn(process.execPath, ['--import', REGISTER_TS, 'apps/cli/src/main.ts', 'worker', '--exec', command, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', RELAY_URL: relayUrl, AGENTRELAY_API_KEY: apiKey, TOOL_PLAN: JSON.stringify(plan) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new WorkerProcess(child);
}
