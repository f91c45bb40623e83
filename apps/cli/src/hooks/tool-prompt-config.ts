import type { ToolPromptEvent } from '@app/contracts/model';

/** The path of a worker run's Claude Code settings file (pass it with `claude --settings`). */
export const CLAUDE_SETTINGS_ENV = 'AGENTRELAY_CLAUDE_SETTINGS';
/** A worker run's Codex config override (pass it with `codex exec -c`). */
export const CODEX_HOOKS_ENV = 'AGENTRELAY_CODEX_HOOKS';

/** A word of a shell command, quoted when it needs to be. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_/.:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Seconds the client lets the hook wait: the prompt's own deadline and a minute for the relay calls around it. */
export function clientHookTimeoutSeconds(promptTimeoutMs: number): number {
  return Math.ceil(promptTimeoutMs / 1000) + 60;
}

/**
 * Claude Code settings holding only the permission hook (every tool: no matcher), for
 * `claude --settings <file>`, which adds them to the user's and the project's settings for that
 * run. `claude -p` never shows a permission dialog, so its PermissionRequest hooks never run: a
 * worker's run asks from PreToolUse.
 */
export function claudeToolPromptSettings(hookCommand: string, timeoutSeconds: number, events: readonly ToolPromptEvent[]): Record<string, unknown> {
  const group = { hooks: [{ type: 'command', command: hookCommand, timeout: timeoutSeconds }] };
  return { hooks: Object.fromEntries(events.map((event) => [event, [group]])) };
}

/**
 * The permission hook as one Codex `-c` override (`codex exec -c "$AGENTRELAY_CODEX_HOOKS" …`):
 * an inline `hooks.PreToolUse` table, the form config.toml takes. TOML basic strings are JSON's.
 */
export function codexToolPromptOverride(hookCommand: string, timeoutSeconds: number): string {
  return `hooks.PreToolUse=[{hooks=[{type="command",command=${JSON.stringify(hookCommand)},timeout=${timeoutSeconds}}]}]`;
}
