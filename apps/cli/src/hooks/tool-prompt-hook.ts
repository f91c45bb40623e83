import { request } from 'node:http';
import { TOOL_PROMPT_CLIENTS, TOOL_PROMPT_EVENTS, type PermissionDecision, type ToolPromptClient, type ToolPromptEvent } from '@app/contracts/model';
import { RelayClient } from '@app/relay-client';
import { HookInputError } from './hook-input';
import { ToolPromptAsker, type ToolPromptQuestion } from './tool-prompt-asker';

/** A worker run's local endpoint that asks on its handoff (set by `agentrelay worker` in the command's environment). */
export const TOOL_PROMPT_URL_ENV = 'AGENTRELAY_TOOL_PROMPT_URL';
/** How long an interactive session's prompt waits for the sender (a duration; 5m by default). */
export const TOOL_PROMPT_TIMEOUT_ENV = 'AGENTRELAY_TOOL_PROMPT_TIMEOUT';
export const DEFAULT_TOOL_PROMPT_TIMEOUT_MS = 5 * 60_000;
const INTERACTIVE_POLL_MS = 2000;

/** What the hook tells the client: a decision, or nothing (the client's own rules and dialog decide). */
export type ToolPromptVerdict = { decision: PermissionDecision; reason: string } | { decision: 'pass' };

/** Reads a PreToolUse / PermissionRequest hook input (the JSON both clients write to the hook's stdin). */
export function parseToolPromptInput(stdin: string, clientOption: string | undefined): ToolPromptQuestion {
  let body: unknown;
  try {
    body = JSON.parse(stdin);
  } catch {
    throw new HookInputError('the hook input on stdin is not JSON (run it from a Claude Code or Codex hook)');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HookInputError('the hook input on stdin is not a JSON object');
  const input = body as Record<string, unknown>;
  const event = input.hook_event_name;
  if (typeof event !== 'string' || !(TOOL_PROMPT_EVENTS as readonly string[]).includes(event)) {
    throw new HookInputError(`agentrelay hook permission answers ${TOOL_PROMPT_EVENTS.join(' and ')}, not "${String(event)}"`);
  }
  if (typeof input.tool_name !== 'string' || input.tool_name.trim() === '') throw new HookInputError('the hook input has no tool_name');
  let client: ToolPromptClient;
  if (clientOption !== undefined) {
    if (!(TOOL_PROMPT_CLIENTS as readonly string[]).includes(clientOption)) throw new HookInputError(`--client must be ${TOOL_PROMPT_CLIENTS.join(' or ')}`);
    client = clientOption as ToolPromptClient;
  } else {
    client = typeof input.turn_id === 'string' ? 'codex' : 'claude-code';
  }
  return { client, event: event as ToolPromptEvent, toolName: input.tool_name, toolInput: input.tool_input ?? null };
}

/**
 * The hook's stdout for a verdict, in the client's documented shape; '' for none. Claude Code:
 * PreToolUse `hookSpecificOutput.permissionDecision` allow/deny with `permissionDecisionReason`;
 * PermissionRequest `hookSpecificOutput.decision.behavior` allow/deny (`message` on a deny).
 * Codex takes the same PermissionRequest shape and a PreToolUse deny; its PreToolUse has no allow
 * (an unknown field fails the hook and runs the tool), so an allow prints nothing there and
 * Codex's own approval and sandbox apply.
 */
export function toolPromptOutput(question: Pick<ToolPromptQuestion, 'client' | 'event'>, verdict: ToolPromptVerdict): string {
  if (verdict.decision === 'pass') return '';
  if (question.event === 'PermissionRequest') {
    const decision = verdict.decision === 'allow' ? { behavior: 'allow' } : { behavior: 'deny', message: verdict.reason };
    return `${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } })}\n`;
  }
  if (question.client === 'codex' && verdict.decision === 'allow') return '';
  return `${JSON.stringify({
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: verdict.decision, permissionDecisionReason: verdict.reason },
  })}\n`;
}

/** Asks the worker's local endpoint; it answers once the sender did, or the deadline passed. */
export function askWorker(url: string, question: ToolPromptQuestion): Promise<ToolPromptVerdict> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ client: question.client, event: question.event, tool_name: question.toolName, tool_input: question.toolInput });
    const call = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        try {
          const reply = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { decision?: string; reason?: string; error?: string };
          if (response.statusCode !== 200) return reject(new Error(reply.error ?? `HTTP ${response.statusCode}`));
          if (reply.decision === 'pass') return resolve({ decision: 'pass' });
          if (reply.decision === 'allow' || reply.decision === 'deny') return resolve({ decision: reply.decision, reason: reply.reason ?? '' });
          reject(new Error('the worker answered no decision'));
        } catch (error) {
          reject(error as Error);
        }
      });
    });
    call.on('error', reject);
    call.end(body);
  });
}

/**
 * Whether the key's agent is the handoff's recipient, and not its sender too. The relay never names
 * the caller: an agent that sent any task is the sender of its sent tasks, one that sent none is not
 * this handoff's sender.
 */
async function callerIsRecipientOf(client: RelayClient, taskId: string): Promise<boolean> {
  const thread = await client.getTask(taskId);
  if (thread.sender.handle === thread.recipient) return false;
  const sent = await client.listTasks({ role: 'sender', limit: 1 });
  return (sent.items[0]?.sender.handle ?? thread.recipient) !== thread.sender.handle;
}

/** A duration such as `5m`, `90s` or `500ms` (a bare number is seconds); null when it is not one. */
export function parseToolPromptTimeout(value: string | undefined): number | null {
  if (value === undefined || value === '') return DEFAULT_TOOL_PROMPT_TIMEOUT_MS;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  if (!match) return null;
  const ms = Math.round(Number(match[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h']);
  return ms >= 1 ? ms : null;
}

export interface ToolPromptHookIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readStdin(signal: AbortSignal): Promise<string>;
}

/**
 * `agentrelay hook permission`: the PreToolUse / PermissionRequest hook. In a worker's run it asks
 * the worker (which asks on the handoff) and denies when that fails. In an interactive session it
 * asks on the handoff named by AGENTRELAY_TASK_ID with AGENTRELAY_API_KEY, and otherwise (or when
 * the relay cannot be asked) prints nothing, so the client shows its own dialog. Exits 1 only when
 * called wrongly (a non-blocking error in both clients).
 */
export async function runToolPromptHook(
  values: { client?: string; url?: string; 'api-key'?: string },
  env: Record<string, string | undefined>,
  io: ToolPromptHookIo,
): Promise<number> {
  let question: ToolPromptQuestion;
  try {
    question = parseToolPromptInput(await io.readStdin(new AbortController().signal), values.client);
  } catch (error) {
    if (!(error instanceof HookInputError)) throw error;
    io.stderr(`agentrelay hook permission: ${error.message}\n`);
    return 1;
  }
  const workerUrl = env[TOOL_PROMPT_URL_ENV];
  if (workerUrl) {
    let verdict: ToolPromptVerdict;
    try {
      verdict = await askWorker(workerUrl, question);
    } catch (error) {
      verdict = { decision: 'deny', reason: `The AgentRelay worker could not ask the sender (${(error as Error).message}); denied.` };
    }
    io.stdout(toolPromptOutput(question, verdict));
    return 0;
  }

  const taskId = env.AGENTRELAY_TASK_ID;
  const apiKey = values['api-key'] ?? env.AGENTRELAY_API_KEY;
  if (!taskId || !apiKey) return 0;
  const timeoutMs = parseToolPromptTimeout(env[TOOL_PROMPT_TIMEOUT_ENV]);
  if (timeoutMs === null) {
    io.stderr(`agentrelay hook permission: ${TOOL_PROMPT_TIMEOUT_ENV} takes a duration such as 5m or 90s\n`);
    return 1;
  }
  const client = new RelayClient({ url: values.url ?? env.RELAY_URL ?? 'http://127.0.0.1:8080', apiKey, retries: 1 });
  let recipient: boolean;
  try {
    recipient = await callerIsRecipientOf(client, taskId);
  } catch (error) {
    io.stderr(`agentrelay hook permission: cannot read the handoff ${taskId}: ${(error as Error).message}\n`);
    return 0;
  }
  if (!recipient) {
    // The sender's answers decide: a session of the sender itself could approve its own prompts.
    io.stderr(`agentrelay hook permission: AGENTRELAY_TASK_ID names a handoff whose recipient is not this agent; the client asks as usual\n`);
    return 0;
  }
  const asker = new ToolPromptAsker(client, { timeoutMs, pollMs: INTERACTIVE_POLL_MS, log: (line) => io.stderr(`agentrelay hook permission: ${line}\n`) });
  const outcome = await asker.ask(taskId, question);
  // A relay that cannot be asked leaves the decision to the person at the session.
  io.stdout(toolPromptOutput(question, outcome.by === 'error' ? { decision: 'pass' } : outcome));
  return 0;
}
