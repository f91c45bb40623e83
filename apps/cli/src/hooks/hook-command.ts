import { parseArgs } from 'node:util';
import { OPEN_STATES, RelayClient, RelayClientError, type TaskListItem } from '@app/relay-client';
import { contextText, digest, stopReason, type HandoffNews } from './handoff-digest';
import { HookInputError, parseHookInput, type HookInput } from './hook-input';
import { SessionStateStore, sessionStateDir, type SessionState } from './session-state';
import { runToolPromptHook, TOOL_PROMPT_TIMEOUT_ENV } from './tool-prompt-hook';

export const HOOK_USAGE = `Session hooks of Claude Code and Codex (read the client's hook JSON on stdin):
  hook session-start|user-prompt-submit|stop [--client claude-code|codex] [--block-on-new]
                                    tell the session of handoffs new or changed since it last
                                    looked (as additional context); stop: with --block-on-new or
                                    AGENTRELAY_HOOK_STOP=1, ask the agent to go on when one arrived
  hook permission [--client claude-code|codex]
                                    PreToolUse / PermissionRequest: ask the sender of the handoff
                                    (in a worker's run, or AGENTRELAY_TASK_ID) whether the tool may
                                    run; no answer within ${TOOL_PROMPT_TIMEOUT_ENV} (5m) denies
  setup claude-code|codex [--project <dir>] [--block-on-new] [--relay-permissions] [--dry-run]
                                    write the MCP server and the hooks into the project's config
`;

/** How long a hook may take in all (stdin, the relay call, the state file) before it gives up silently. */
export const DEFAULT_HOOK_TIMEOUT_MS = 2000;
/** The most handoffs one look lists. */
const LIST_LIMIT = 100;

export interface HookIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** The hook input the client wrote on stdin; gives up (with what it has) when `signal` aborts. */
  readStdin(signal: AbortSignal): Promise<string>;
  now?: () => number;
}

/** Reads the process's stdin to its end, or what arrived before `signal` aborts. */
export function readProcessStdin(signal: AbortSignal): Promise<string> {
  const stdin = process.stdin;
  if (stdin.isTTY) return Promise.resolve('');
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const done = (): void => {
      signal.removeEventListener('abort', stop);
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const stop = (): void => {
      stdin.destroy();
      done();
    };
    stdin.on('data', (chunk: Buffer) => chunks.push(chunk));
    stdin.once('end', done);
    stdin.once('error', done);
    signal.addEventListener('abort', stop, { once: true });
  });
}

const OPTIONS = {
  client: { type: 'string' },
  'block-on-new': { type: 'boolean' },
  url: { type: 'string' },
  'api-key': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The timeout from `AGENTRELAY_HOOK_TIMEOUT_MS` (100 ms to 60 s), else the default. */
export function hookTimeoutMs(env: Record<string, string | undefined>, io: Pick<HookIo, 'stderr'>): number {
  const raw = env.AGENTRELAY_HOOK_TIMEOUT_MS;
  if (raw === undefined || raw === '') return DEFAULT_HOOK_TIMEOUT_MS;
  const value = Number(raw);
  if (Number.isInteger(value) && value >= 100 && value <= 60_000) return value;
  io.stderr(`agentrelay hook: AGENTRELAY_HOOK_TIMEOUT_MS must be an integer from 100 to 60000 (ms); using ${DEFAULT_HOOK_TIMEOUT_MS}\n`);
  return DEFAULT_HOOK_TIMEOUT_MS;
}

/**
 * `agentrelay hook <event>`. Prints nothing and exits 0 whenever there is nothing to tell or the
 * relay cannot answer in time, so a relay that is down never holds up the user's prompt. It exits
 * 1 (a non-blocking hook error in both clients, never 2, which would block) only when it is called
 * wrongly.
 */
export async function runHookCommand(argv: string[], env: Record<string, string | undefined>, io: HookIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    io.stderr(`agentrelay hook: ${(error as Error).message}\n`);
    return 1;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(HOOK_USAGE);
    return 0;
  }
  // A tool prompt waits for the sender's answer: it has a deadline of its own.
  if (positionals[0] === 'permission') return runToolPromptHook(values, env, io);
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), hookTimeoutMs(env, io));
  try {
    const outcome = await Promise.race([
      answer(positionals[0], values, env, io, deadline.signal),
      new Promise<null>((resolve) => deadline.signal.addEventListener('abort', () => resolve(null), { once: true })),
    ]);
    if (outcome === null || deadline.signal.aborted) return 0;
    if (outcome.stdout) io.stdout(outcome.stdout);
    return outcome.code;
  } finally {
    clearTimeout(timer);
    deadline.abort();
  }
}

interface Outcome {
  code: number;
  stdout?: string;
}

async function answer(
  eventArgument: string | undefined,
  values: { client?: string; 'block-on-new'?: boolean; url?: string; 'api-key'?: string },
  env: Record<string, string | undefined>,
  io: HookIo,
  signal: AbortSignal,
): Promise<Outcome | null> {
  let input: HookInput;
  try {
    input = parseHookInput(await io.readStdin(signal), eventArgument, values.client);
  } catch (error) {
    if (signal.aborted) return null;
    if (!(error instanceof HookInputError)) throw error;
    io.stderr(`agentrelay hook: ${error.message}\n`);
    return { code: 1 };
  }
  if (input.event === 'Stop' && (input.stopHookActive || !(values['block-on-new'] || env.AGENTRELAY_HOOK_STOP === '1'))) return { code: 0 };

  const apiKey = values['api-key'] ?? env.AGENTRELAY_API_KEY;
  if (!apiKey) {
    io.stderr('agentrelay hook: AGENTRELAY_API_KEY is not set, so no handoffs are checked\n');
    return { code: 0 };
  }
  const relayUrl = values.url ?? env.RELAY_URL ?? 'http://127.0.0.1:8080';
  const store = new SessionStateStore(sessionStateDir(env));
  const file = store.fileFor(relayUrl, apiKey, input.sessionId);
  const now = io.now?.() ?? Date.now();
  const stored = await store.read(file);
  // A new, cleared or compacted session no longer holds what it was told: tell it every open handoff.
  const fresh = stored === null || (input.event === 'SessionStart' && input.source !== 'resume');
  if (input.event === 'Stop' && stored === null) return { code: 0 };
  const state: SessionState = fresh ? { version: 1, client: input.client, since: null, seen: {} } : { ...(stored as SessionState), client: input.client };

  const items = await listHandoffs(relayUrl, apiKey, state.since, signal, io);
  if (items === null || signal.aborted) return null;
  const { news, next } = digest(state, items, now);

  let reported: HandoffNews[] = news;
  let stdout: string | undefined;
  if (input.event === 'Stop') {
    reported = news.filter((entry) => entry.change.kind === 'new');
    if (reported.length > 0) stdout = `${JSON.stringify({ decision: 'block', reason: stopReason(reported, input.client) })}\n`;
  } else if (news.length > 0) {
    stdout = `${JSON.stringify({ hookSpecificOutput: { hookEventName: input.event, additionalContext: contextText(news, input.client) } })}\n`;
  }
  // At Stop only the handoffs it names count as told; other changes wait for the next prompt.
  const told = input.event === 'Stop' ? rememberOnly(state, next, reported) : next;
  try {
    await store.write(file, told);
    if (stored === null) await store.prune(now);
  } catch (error) {
    io.stderr(`agentrelay hook: cannot write the session state ${file}: ${(error as Error).message}\n`);
  }
  if (signal.aborted) return null;
  return { code: 0, ...(stdout ? { stdout } : {}) };
}

/** The session's state after a Stop: only the handoffs named in its reason are marked as told. */
function rememberOnly(before: SessionState, after: SessionState, told: HandoffNews[]): SessionState {
  const seen = { ...before.seen };
  for (const { item } of told) seen[item.task_id] = after.seen[item.task_id];
  return { ...before, seen };
}

/**
 * One `tasks/list` of the agent's inbox: the open handoffs on a first look, else everything that
 * changed after the cursor. Null when the relay cannot answer (down, slow, refusing the key).
 */
async function listHandoffs(
  relayUrl: string,
  apiKey: string,
  since: string | null,
  signal: AbortSignal,
  io: Pick<HookIo, 'stderr'>,
): Promise<TaskListItem[] | null> {
  const client = new RelayClient({
    url: relayUrl,
    apiKey,
    retries: 0,
    fetch: (url, init) => fetch(url, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal }),
  });
  try {
    const page = await client.listTasks({ role: 'recipient', ...(since ? { since } : { status: [...OPEN_STATES] }), limit: LIST_LIMIT });
    return page.items;
  } catch (error) {
    if (error instanceof RelayClientError && error.unauthorized) io.stderr('agentrelay hook: the relay refused AGENTRELAY_API_KEY\n');
    return null;
  }
}
