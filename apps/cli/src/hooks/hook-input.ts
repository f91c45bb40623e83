/**
 * The JSON a coding agent's client writes to a command hook's stdin. Claude Code and Codex share
 * the event names and the common fields (`session_id`, `transcript_path`, `cwd`, `hook_event_name`).
 * Codex adds `turn_id` to turn-scoped events (UserPromptSubmit, Stop) and keeps its transcripts
 * under `.codex/` (Claude Code's are under `.claude/`).
 */
export const HOOK_EVENTS = ['SessionStart', 'UserPromptSubmit', 'Stop'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export const HOOK_CLIENTS = ['claude-code', 'codex'] as const;
export type HookClient = (typeof HOOK_CLIENTS)[number];

const EVENT_ARGUMENTS: Record<string, HookEvent> = {
  'session-start': 'SessionStart',
  'user-prompt-submit': 'UserPromptSubmit',
  stop: 'Stop',
};

export interface HookInput {
  event: HookEvent;
  client: HookClient;
  sessionId: string;
  /** SessionStart: `startup`, `resume`, `clear` or `compact`. */
  source?: string;
  /** Stop: the client is already continuing because a Stop hook asked it to. */
  stopHookActive: boolean;
}

export class HookInputError extends Error {}

/** `session-start`, `SessionStart`, … → the event; undefined for anything else. */
export function parseHookEvent(name: string | undefined): HookEvent | undefined {
  if (name === undefined) return undefined;
  if ((HOOK_EVENTS as readonly string[]).includes(name)) return name as HookEvent;
  return EVENT_ARGUMENTS[name];
}

/** The kebab-case argument of `agentrelay hook <event>` that setup writes. */
export function hookEventArgument(event: HookEvent): string {
  return Object.entries(EVENT_ARGUMENTS).find(([, value]) => value === event)?.[0] as string;
}

/**
 * Reads the client's hook JSON. The event comes from `hook_event_name` when the input names one
 * (else from the command's argument), the client from `--client` when setup wrote it (else from
 * the input's shape).
 */
export function parseHookInput(stdin: string, eventArgument: string | undefined, clientOption: string | undefined): HookInput {
  let body: unknown;
  try {
    body = JSON.parse(stdin);
  } catch {
    throw new HookInputError('the hook input on stdin is not JSON (run it from a Claude Code or Codex hook)');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HookInputError('the hook input on stdin is not a JSON object');
  const input = body as Record<string, unknown>;

  const named = typeof input.hook_event_name === 'string' ? input.hook_event_name : undefined;
  const event = named !== undefined ? parseHookEvent(named) : parseHookEvent(eventArgument);
  if (!event) {
    throw new HookInputError(
      named !== undefined
        ? `the hook event "${named}" is not one agentrelay answers (SessionStart, UserPromptSubmit, Stop)`
        : 'name the hook event: agentrelay hook session-start|user-prompt-submit|stop',
    );
  }
  if (typeof input.session_id !== 'string' || input.session_id.trim() === '') throw new HookInputError('the hook input has no session_id');

  let client: HookClient;
  if (clientOption !== undefined) {
    if (!(HOOK_CLIENTS as readonly string[]).includes(clientOption)) throw new HookInputError(`--client must be ${HOOK_CLIENTS.join(' or ')}`);
    client = clientOption as HookClient;
  } else {
    client = detectClient(input);
  }
  return {
    event,
    client,
    sessionId: input.session_id,
    ...(typeof input.source === 'string' ? { source: input.source } : {}),
    stopHookActive: input.stop_hook_active === true,
  };
}

function detectClient(input: Record<string, unknown>): HookClient {
  if (typeof input.turn_id === 'string') return 'codex';
  return typeof input.transcript_path === 'string' && /[\\/]\.codex[\\/]/.test(input.transcript_path) ? 'codex' : 'claude-code';
}
