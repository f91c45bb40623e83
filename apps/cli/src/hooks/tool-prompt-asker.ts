import { randomUUID } from 'node:crypto';
import { metadataBoundsProblem } from '@app/contracts/model';
import {
  PERMISSION_REQUEST_KIND,
  PERMISSION_TIMEOUT_KIND,
  permissionAnswerOf,
  type PermissionDecision,
  type PermissionRequest,
  type ToolPromptAnswerer,
  type ToolPromptClient,
  type ToolPromptEvent,
} from '@app/contracts/model';
import type { RelayClient } from '@app/relay-client';

/** What a client's permission hook wants decided. */
export interface ToolPromptQuestion {
  client: ToolPromptClient;
  event: ToolPromptEvent;
  toolName: string;
  toolInput: unknown;
}

export interface ToolPromptOutcome {
  decision: PermissionDecision;
  reason: string;
  /** Who decided: the sender's answer, an approver's (a person, when the recipient's trust policy says so), the deadline, or a relay that could not be asked. */
  by: 'sender' | 'approver' | 'timeout' | 'error';
}

export interface ToolPromptAskerOptions {
  timeoutMs: number;
  /** How often the thread is read while waiting (an inbox event of the task reads it at once). */
  pollMs: number;
  log?(line: string): void;
}

/** A tool input larger than this (as JSON) travels as a cut preview. */
const TOOL_INPUT_MAX_BYTES = 16 * 1024;
const PREVIEW_CHARS = 4000;
const TEXT_PREVIEW_CHARS = 400;
/** The answer is looked for among this many newest messages. */
const HISTORY_LENGTH = 100;
const ENDED_STATES = new Set([
  'completed',
  'canceled',
  'cancelled',
  'failed',
  'rejected',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_FAILED',
  'TASK_STATE_REJECTED',
]);
const CLIENT_NAMES: Record<ToolPromptClient, string> = { 'claude-code': 'Claude Code', codex: 'Codex' };

interface A2aHistoryMessage {
  role?: string;
  parts?: Array<Record<string, unknown>>;
  metadata?: Record<string, unknown>;
}

/** `metadata.relay.toolPrompts` of an A2A Task: set by the relay (no agent can) when people answer the task's tool prompts. */
interface RelayToolPrompts {
  answeredBy?: string;
  answers?: Array<{ requestId?: string; decision?: string; reason?: string | null; answeredBy?: string }>;
}

interface A2aTask {
  status?: { state?: string };
  history?: A2aHistoryMessage[];
  metadata?: { relay?: { toolPrompts?: RelayToolPrompts } };
}

function answererOf(task: A2aTask): ToolPromptAnswerer {
  return task.metadata?.relay?.toolPrompts?.answeredBy === 'approvers' ? 'approvers' : 'sender';
}

export function describeDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${Math.round(ms / 1000)}s`;
}

function toolInputFields(input: unknown): Pick<PermissionRequest, 'tool_input' | 'tool_input_preview'> {
  const json = JSON.stringify(input ?? null);
  if (Buffer.byteLength(json) <= TOOL_INPUT_MAX_BYTES && metadataBoundsProblem({ input }) === undefined) return { tool_input: input ?? null };
  return { tool_input: null, tool_input_preview: `${json.slice(0, PREVIEW_CHARS)}…` };
}

function sleep(ms: number, wake: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (wake.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      wake.removeEventListener('abort', done);
      resolve();
    }
    wake.addEventListener('abort', done, { once: true });
  });
}

/**
 * Asks whether the coding agent run for a handoff may use a tool: writes the question on the
 * handoff (as its recipient) and waits until the deadline, which denies, for the answer of the
 * sender, or of an approver when the recipient's trust policy gives the handoff's tool prompts to
 * people (docs/decisions/0031-tool-prompts-answered-by-people.md).
 */
export class ToolPromptAsker {
  private readonly waiting = new Map<string, Set<() => void>>();

  constructor(
    private readonly client: RelayClient,
    private readonly options: ToolPromptAskerOptions,
  ) {}

  /** Something happened on the task (an inbox event): the waiting questions read it now. */
  nudge(taskId: string): void {
    for (const wake of this.waiting.get(taskId) ?? []) wake();
  }

  async ask(taskId: string, question: ToolPromptQuestion, signal?: AbortSignal): Promise<ToolPromptOutcome> {
    const requestId = randomUUID();
    const deadline = Date.now() + this.options.timeoutMs;
    let answerer: ToolPromptAnswerer;
    try {
      answerer = answererOf(await this.client.call<A2aTask>('tasks/get', { id: taskId, historyLength: 0 }, true));
    } catch (error) {
      this.options.log?.(`tool prompt: ${taskId}: cannot read the handoff: ${(error as Error).message}`);
      return { decision: 'deny', reason: `AgentRelay could not read the handoff (${(error as Error).message}); denied.`, by: 'error' };
    }
    const request: PermissionRequest = {
      kind: PERMISSION_REQUEST_KIND,
      request_id: requestId,
      tool_name: question.toolName,
      ...toolInputFields(question.toolInput),
      client: question.client,
      hook_event: question.event,
      expires_at: new Date(deadline).toISOString(),
      ...(answerer === 'approvers' ? { answered_by: answerer } : {}),
    };
    const inputText = JSON.stringify(question.toolInput ?? null);
    const within = describeDuration(this.options.timeoutMs);
    const text =
      `Permission needed: ${CLIENT_NAMES[question.client]} wants to use ${question.toolName} ` +
      `(${inputText.length > TEXT_PREVIEW_CHARS ? `${inputText.slice(0, TEXT_PREVIEW_CHARS)}…` : inputText}). ` +
      (answerer === 'approvers'
        ? `The recipient's trust policy gives this handoff's tool prompts to people: an approver answers request ${requestId} in the console (Approvals) or with ` +
          `"agentrelay approvals allow-tool ${taskId} ${requestId}" within ${within}; no answer denies it.`
        : `Reply "allow ${requestId}" or "deny ${requestId}: <reason>" (or send a permission_answer) within ${within}; no answer denies it.`);
    try {
      await this.client.call(
        'message/send',
        {
          task_id: taskId,
          message: {
            parts: [
              { type: 'text', text },
              { type: 'data', data: request },
            ],
            payload: { [PERMISSION_REQUEST_KIND]: request },
          },
          metadata: { client_idempotency_key: requestId },
        },
        true,
      );
    } catch (error) {
      this.options.log?.(`tool prompt: ${taskId}: cannot ask about ${question.toolName}: ${(error as Error).message}`);
      return { decision: 'deny', reason: `AgentRelay could not ask the sender of the handoff (${(error as Error).message}); denied.`, by: 'error' };
    }
    this.options.log?.(
      `tool prompt: ${taskId}: asked ${answerer === 'approvers' ? 'the approvers' : 'the sender'} about ${question.toolName} (request ${requestId})`,
    );

    const waiters = this.waiting.get(taskId) ?? new Set<() => void>();
    this.waiting.set(taskId, waiters);
    try {
      while (Date.now() < deadline && !signal?.aborted) {
        const found = await this.readAnswer(taskId, requestId, answerer);
        if (found) return found;
        const wake = new AbortController();
        const onWake = (): void => wake.abort();
        waiters.add(onWake);
        signal?.addEventListener('abort', onWake, { once: true });
        await sleep(Math.min(this.options.pollMs, Math.max(0, deadline - Date.now())), wake.signal);
        waiters.delete(onWake);
        signal?.removeEventListener('abort', onWake);
      }
      if (signal?.aborted) return { decision: 'deny', reason: 'The run ended before the sender answered: denied.', by: 'error' };
      const last = await this.readAnswer(taskId, requestId, answerer);
      if (last) return last;
    } finally {
      if (waiters.size === 0) this.waiting.delete(taskId);
    }
    const reason = `No answer to request ${requestId} within ${describeDuration(this.options.timeoutMs)}: denied.`;
    await this.client
      .call('message/send', {
        task_id: taskId,
        message: {
          parts: [
            { type: 'text', text: `${question.toolName}: ${reason}` },
            { type: 'data', data: { kind: PERMISSION_TIMEOUT_KIND, request_id: requestId, decision: 'deny' } },
          ],
        },
        metadata: { client_idempotency_key: `${requestId}-timeout` },
      })
      .catch((error: unknown) => this.options.log?.(`tool prompt: ${taskId}: cannot note the timeout: ${(error as Error).message}`));
    this.options.log?.(`tool prompt: ${taskId}: ${reason}`);
    return { decision: 'deny', reason, by: 'timeout' };
  }

  /**
   * The answer: an approver's from the relay's record on the task when people answer its tool
   * prompts (the sender's messages are not answers then), else the sender's in the thread (A2A
   * history: parts and metadata); a deny when the handoff ended; else null.
   */
  private async readAnswer(taskId: string, requestId: string, answerer: ToolPromptAnswerer): Promise<ToolPromptOutcome | null> {
    let task: A2aTask;
    try {
      task = await this.client.call<A2aTask>('tasks/get', { id: taskId, historyLength: answerer === 'approvers' ? 0 : HISTORY_LENGTH }, true);
    } catch (error) {
      this.options.log?.(`tool prompt: ${taskId}: cannot read the handoff: ${(error as Error).message}`);
      return null;
    }
    if (answerer === 'approvers') {
      const answer = task.metadata?.relay?.toolPrompts?.answers?.find((entry) => entry.requestId === requestId);
      if (answer && (answer.decision === 'allow' || answer.decision === 'deny')) {
        const who = answer.answeredBy ? ` (${answer.answeredBy})` : '';
        const reason = answer.reason || (answer.decision === 'allow' ? `Allowed by an approver${who}.` : `Denied by an approver${who}.`);
        return { decision: answer.decision, reason, by: 'approver' };
      }
      if (ENDED_STATES.has(task.status?.state ?? ''))
        return { decision: 'deny', reason: 'The handoff ended before an approver answered: denied.', by: 'error' };
      return null;
    }
    for (const message of task.history ?? []) {
      if (message.role !== 'user' && message.role !== 'ROLE_USER') continue;
      const answer = permissionAnswerOf(message, requestId);
      if (answer) {
        const reason = answer.reason ?? (answer.decision === 'allow' ? 'Allowed by the sender of the handoff.' : 'Denied by the sender of the handoff.');
        return { decision: answer.decision, reason, by: 'sender' };
      }
    }
    if (ENDED_STATES.has(task.status?.state ?? '')) return { decision: 'deny', reason: 'The handoff ended before the sender answered: denied.', by: 'error' };
    return null;
  }
}
