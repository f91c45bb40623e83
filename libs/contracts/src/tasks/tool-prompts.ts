/**
 * Tool prompts on a handoff (docs/agents.md#tool-prompts-from-a-worker). A coding agent run for a
 * handoff wants a tool that is not pre-approved; its recipient asks on the handoff with a message
 * carrying a data part `{kind: "permission_request", …}` (the same object in the message's
 * payload, A2A metadata, under `permission_request`). The sender answers with a message carrying a
 * data part `{kind: "permission_answer", request_id, decision, reason?}`, or the same fields in its
 * payload / A2A metadata under `permission_answer`, or a text reply `allow <request_id>` /
 * `deny <request_id>: <reason>` (what a text-only reply, the CLI's or MCP's, can say). No answer in time is a deny: the recipient then
 * writes a data part `{kind: "permission_timeout", request_id, decision: "deny"}`.
 */
export const PERMISSION_REQUEST_KIND = 'permission_request';
export const PERMISSION_ANSWER_KIND = 'permission_answer';
export const PERMISSION_TIMEOUT_KIND = 'permission_timeout';

export const PERMISSION_DECISIONS = ['allow', 'deny'] as const;
export type PermissionDecision = (typeof PERMISSION_DECISIONS)[number];

/** The clients whose permission hooks ask on the handoff. */
export const TOOL_PROMPT_CLIENTS = ['claude-code', 'codex'] as const;
export type ToolPromptClient = (typeof TOOL_PROMPT_CLIENTS)[number];

/** The hook events that ask: PreToolUse (every tool call) and PermissionRequest (a permission dialog would show). */
export const TOOL_PROMPT_EVENTS = ['PreToolUse', 'PermissionRequest'] as const;
export type ToolPromptEvent = (typeof TOOL_PROMPT_EVENTS)[number];

export interface PermissionRequest {
  kind: typeof PERMISSION_REQUEST_KIND;
  request_id: string;
  tool_name: string;
  /** The tool's input as the client gave it, or null when it was too large (then `tool_input_preview`). */
  tool_input: unknown;
  /** The tool's input as JSON text, cut to a few KiB, when `tool_input` was left out. */
  tool_input_preview?: string;
  client: ToolPromptClient;
  hook_event: ToolPromptEvent;
  /** When an unanswered request is denied. */
  expires_at: string;
  /** Who answers: the handoff's sender, or people with the approver role when a tool-prompt rule of the recipient's trust policy says so. */
  answered_by?: ToolPromptAnswerer;
}

export type ToolPromptAnswerer = 'sender' | 'approvers';

export interface PermissionAnswer {
  request_id: string;
  decision: PermissionDecision;
  /** What the agent is told, at most 2000 characters. */
  reason?: string;
}

/** A person's answer to a tool prompt of a handoff whose tool prompts people answer. */
export interface ToolPromptAnswerRecord {
  request_id: string;
  decision: PermissionDecision;
  reason: string | null;
  /** The person, as the admin audit names them (their email, else their subject, else the admin actor). */
  answered_by: string;
  answered_at: string;
}

/**
 * Set on a handoff a tool-prompt rule of its recipient's trust policy matched: its tool prompts are
 * answered by people with the approver role (console, CLI, admin API), never by its sender; the
 * recipient's worker takes an answer from `answers` only. Null on a handoff whose sender answers.
 */
export interface TaskToolPrompts {
  answered_by: 'approvers';
  /** The name of the rule that matched. */
  rule: string;
  four_eyes: boolean;
  /** Oldest first, one per request at most. */
  answers: ToolPromptAnswerRecord[];
}

export const TOOL_PROMPT_LIMITS = {
  /** Answers one handoff keeps (a run asks again after this many, and is told no). */
  answersPerTask: 200,
  reasonChars: 2000,
  requestIdChars: 100,
  /** Open tool prompts one read of the approvers' queue returns at most. */
  pendingPageMax: 200,
  pendingPageDefault: 50,
} as const;

const REASON_MAX_CHARS = TOOL_PROMPT_LIMITS.reasonChars;

/** The answer to `requestId` in an object `{request_id, decision, reason?}`, else null. */
function answerFields(value: unknown, requestId: string): PermissionAnswer | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const { request_id: id, decision, reason } = value as Record<string, unknown>;
  if (id !== requestId || !(PERMISSION_DECISIONS as readonly unknown[]).includes(decision)) return null;
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > REASON_MAX_CHARS)) return null;
  return { request_id: requestId, decision: decision as PermissionDecision, ...(typeof reason === 'string' ? { reason } : {}) };
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `allow <id>` or `deny <id>`, then optionally `:` (or `-`) and the reason. */
function textAnswer(text: string, requestId: string): PermissionAnswer | null {
  const match = new RegExp(`^\\s*(allow|deny)\\s+${escapeRegExp(requestId)}(?![\\w-])\\s*[:-]?([\\s\\S]*)$`, 'i').exec(text);
  if (!match) return null;
  const reason = match[2].trim().slice(0, REASON_MAX_CHARS);
  return { request_id: requestId, decision: match[1].toLowerCase() as PermissionDecision, ...(reason ? { reason } : {}) };
}

/**
 * The answer to `requestId` a message carries, from its parts (`{kind: "data", data}` in A2A,
 * `{type: "data", data}` in the relay's dialect), its payload / metadata, or its text; null when none.
 */
export function permissionAnswerOf(
  message: { parts?: ReadonlyArray<Record<string, unknown>>; payload?: Record<string, unknown>; metadata?: Record<string, unknown> },
  requestId: string,
): PermissionAnswer | null {
  for (const part of message.parts ?? []) {
    const type = part.kind ?? part.type;
    if (type !== 'data' && !(type === undefined && 'data' in part)) continue;
    const data = part.data as Record<string, unknown> | undefined;
    const answer = data?.kind === PERMISSION_ANSWER_KIND ? answerFields(data, requestId) : null;
    if (answer) return answer;
  }
  for (const bag of [message.payload, message.metadata]) {
    const answer = answerFields(bag?.[PERMISSION_ANSWER_KIND], requestId);
    if (answer) return answer;
  }
  for (const part of message.parts ?? []) {
    if ((part.kind ?? part.type) !== 'text' || typeof part.text !== 'string') continue;
    const answer = textAnswer(part.text, requestId);
    if (answer) return answer;
  }
  return null;
}
