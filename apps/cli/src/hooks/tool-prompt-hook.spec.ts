import { execFileSync } from 'node:child_process';
import { HookInputError } from './hook-input';
import { parseToolPromptInput, parseToolPromptTimeout, toolPromptOutput } from './tool-prompt-hook';
import { codexToolPromptOverride, claudeToolPromptSettings } from './tool-prompt-config';

const claudePreToolUse = {
  session_id: 's-1',
  transcript_path: '/home/a/.claude/projects/x/s-1.jsonl',
  cwd: '/repo',
  permission_mode: 'default',
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command: 'npm test' },
  tool_use_id: 'toolu_1',
};

describe('agentrelay hook permission: the clients’ permission hook JSON', () => {
  it('reads the tool and the event of a PreToolUse or PermissionRequest input, and which client wrote it', () => {
    expect(parseToolPromptInput(JSON.stringify(claudePreToolUse), undefined)).toEqual({
      client: 'claude-code',
      event: 'PreToolUse',
      toolName: 'Bash',
      toolInput: { command: 'npm test' },
    });
    const codex = { ...claudePreToolUse, hook_event_name: 'PermissionRequest', turn_id: 't-1', transcript_path: null };
    expect(parseToolPromptInput(JSON.stringify(codex), undefined)).toMatchObject({ client: 'codex', event: 'PermissionRequest' });
    expect(parseToolPromptInput(JSON.stringify(codex), 'claude-code').client).toBe('claude-code');
  });

  it('refuses input that is no permission hook input, naming what is wrong', () => {
    expect(() => parseToolPromptInput('not json', undefined)).toThrow(
      new HookInputError('the hook input on stdin is not JSON (run it from a Claude Code or Codex hook)'),
    );
    expect(() => parseToolPromptInput(JSON.stringify({ ...claudePreToolUse, hook_event_name: 'Stop' }), undefined)).toThrow(
      'agentrelay hook permission answers PreToolUse and PermissionRequest, not "Stop"',
    );
    expect(() => parseToolPromptInput(JSON.stringify({ ...claudePreToolUse, tool_name: '' }), undefined)).toThrow('the hook input has no tool_name');
    expect(() => parseToolPromptInput(JSON.stringify(claudePreToolUse), 'cursor')).toThrow('--client must be claude-code or codex');
  });

  it('answers Claude Code in its documented shapes: permissionDecision for PreToolUse, decision.behavior for PermissionRequest', () => {
    const pre = { client: 'claude-code', event: 'PreToolUse' } as const;
    expect(JSON.parse(toolPromptOutput(pre, { decision: 'allow', reason: 'Allowed by the sender of the handoff.' }))).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'Allowed by the sender of the handoff.' },
    });
    expect(JSON.parse(toolPromptOutput(pre, { decision: 'deny', reason: 'No.' }))).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'No.' },
    });
    const dialog = { client: 'claude-code', event: 'PermissionRequest' } as const;
    expect(JSON.parse(toolPromptOutput(dialog, { decision: 'allow', reason: 'Yes.' }))).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    });
    expect(JSON.parse(toolPromptOutput(dialog, { decision: 'deny', reason: 'No.' }))).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'No.' } },
    });
    expect(toolPromptOutput(pre, { decision: 'pass' })).toBe('');
  });

  it('answers Codex with a PreToolUse deny only (an allow leaves its approval and sandbox in charge) and the PermissionRequest shape', () => {
    const pre = { client: 'codex', event: 'PreToolUse' } as const;
    expect(toolPromptOutput(pre, { decision: 'allow', reason: 'Yes.' })).toBe('');
    expect(JSON.parse(toolPromptOutput(pre, { decision: 'deny', reason: 'No.' }))).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'No.' },
    });
    expect(JSON.parse(toolPromptOutput({ client: 'codex', event: 'PermissionRequest' }, { decision: 'allow', reason: 'Yes.' }))).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    });
  });

  it('writes the hook into Claude Code settings and a Codex -c override, with the timeout in seconds', () => {
    expect(claudeToolPromptSettings("node '/a b/main.js' hook permission", 360, ['PreToolUse'])).toEqual({
      hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: "node '/a b/main.js' hook permission", timeout: 360 }] }] },
    });
    expect(codexToolPromptOverride('node "/x/main.js" hook permission --client codex', 360)).toBe(
      'hooks.PreToolUse=[{hooks=[{type="command",command="node \\"/x/main.js\\" hook permission --client codex",timeout=360}]}]',
    );
    // An independent TOML parser (Python's tomllib) reads the override as Codex's config would.
    const parsed = execFileSync(
      'python3',
      ['-c', 'import json,sys,tomllib; print(json.dumps(tomllib.loads(sys.argv[1])))', codexToolPromptOverride("node '/a b/x.js' hook", 90)],
      {
        encoding: 'utf8',
      },
    );
    expect(JSON.parse(parsed)).toEqual({ hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: "node '/a b/x.js' hook", timeout: 90 }] }] } });
  });

  it('reads AGENTRELAY_TOOL_PROMPT_TIMEOUT as a duration, 5m when unset', () => {
    expect(parseToolPromptTimeout(undefined)).toBe(300_000);
    expect(parseToolPromptTimeout('90s')).toBe(90_000);
    expect(parseToolPromptTimeout('2m')).toBe(120_000);
    expect(parseToolPromptTimeout('soon')).toBeNull();
  });
});
