import type pg from 'pg';
import {
  PERMISSION_REQUEST_KIND,
  TOOL_PROMPT_LIMITS,
  type PendingToolPrompt,
  type PendingToolPromptsReply,
  type PermissionRequest,
  type TaskState,
} from '@app/contracts';
import { PENDING_TOOL_PROMPTS_SQL } from './tool-prompts.sql';

interface PendingRow {
  task_id: string;
  sender_handle: string;
  recipient_handle: string;
  summary: string;
  state: TaskState;
  rule: string;
  four_eyes: boolean;
  created_at: Date;
  request: unknown;
}

/** A question as a recipient wrote it, if it has the fields an approver needs (a recipient may write any payload). */
function questionOf(value: unknown): PermissionRequest | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const request = value as Record<string, unknown>;
  const texts = ['request_id', 'tool_name', 'client', 'hook_event', 'expires_at'] as const;
  if (request.kind !== PERMISSION_REQUEST_KIND || texts.some((field) => typeof request[field] !== 'string')) return null;
  return request as unknown as PermissionRequest;
}

/**
 * The approvers' queue of tool prompts (docs/decisions/0031-tool-prompts-answered-by-people.md):
 * the open questions of handoffs whose tool prompts people answer, oldest first; with `orgs`, only
 * those of handoffs one of whose parties is in one of them (a person's scope, docs/orgs.md).
 */
export async function pendingToolPrompts(
  pool: pg.Pool,
  limit: number = TOOL_PROMPT_LIMITS.pendingPageDefault,
  now = new Date(),
  orgs?: string[],
): Promise<PendingToolPromptsReply> {
  const { rows } = await pool.query<PendingRow>({ name: 'tasks-pending-tool-prompts', text: PENDING_TOOL_PROMPTS_SQL, values: [now, limit, orgs ?? null] });
  const items: PendingToolPrompt[] = [];
  for (const row of rows) {
    const request = questionOf(row.request);
    if (!request) continue;
    items.push({
      task_id: row.task_id,
      sender: row.sender_handle,
      recipient: row.recipient_handle,
      summary: row.summary,
      state: row.state,
      rule: row.rule,
      four_eyes: row.four_eyes,
      asked_at: row.created_at.toISOString(),
      request,
    });
  }
  return { items };
}
