import { z } from 'zod';

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

export const permissionRequestSchema = z.object({
  kind: z.literal(PERMISSION_REQUEST_KIND),
  request_id: z.string().min(1).max(100),
  tool_name: z.string().min(1).max(200),
  /** The tool's input as the client gave it, or null when it was too large (then `tool_input_preview`). */
  tool_input: z.unknown(),
  /** The tool's input as JSON text, cut to a few KiB, when `tool_input` was left out. */
  tool_input_preview: z.string().optional(),
  client: z.enum(TOOL_PROMPT_CLIENTS),
  hook_event: z.enum(TOOL_PROMPT_EVENTS),
  /** When an unanswered request is denied. */
  expires_at: z.string(),
});
export type PermissionRequest = z.infer<typeof permissionRequestSchema>;

export const permissionAnswerSchema = z.object({
  request_id: z.string().min(1).max(100),
  decision: z.enum(PERMISSION_DECISIONS),
  reason: z.string().max(2000).optional(),
});
export type PermissionAnswer = z.infer<typeof permissionAnswerSchema>;

const answerPartSchema = permissionAnswerSchema.extend({ kind: z.literal(PERMISSION_ANSWER_KIND) });

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `allow <id>` or `deny <id>`, then optionally `:` (or `-`) and the reason. */
function textAnswer(text: string, requestId: string): PermissionAnswer | null {
  const match = new RegExp(`^\\s*(allow|deny)\\s+${escapeRegExp(requestId)}(?![\\w-])\\s*[:-]?([\\s\\S]*)$`, 'i').exec(text);
  if (!match) return null;
  const reason = match[2].trim().slice(0, 2000);
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
    const parsed = answerPartSchema.safeParse(part.data);
    if (parsed.success && parsed.data.request_id === requestId) {
      const { kind: _kind, ...answer } = parsed.data;
      return answer;
    }
  }
  for (const bag of [message.payload, message.metadata]) {
    const parsed = permissionAnswerSchema.safeParse(bag?.[PERMISSION_ANSWER_KIND]);
    if (parsed.success && parsed.data.request_id === requestId) return parsed.data;
  }
  for (const part of message.parts ?? []) {
    if ((part.kind ?? part.type) !== 'text' || typeof part.text !== 'string') continue;
    const answer = textAnswer(part.text, requestId);
    if (answer) return answer;
  }
  return null;
}
