import { ADMIN_TASK_LIMITS, type AdminTaskRow } from '@app/contracts';
import { toTaskChain, type TaskRow } from '../store/task-rows';

export type AdminRow = TaskRow & {
  created_key: string;
  artifact_count: number | string;
  unread_messages?: number | string;
  rank?: number;
  rank_key?: string;
  last_event_position?: string | null;
};

export function toAdminRow(row: AdminRow): AdminTaskRow {
  return {
    id: row.id,
    context_id: row.context_id,
    state: row.state,
    intent: row.intent,
    summary: row.summary.length > ADMIN_TASK_LIMITS.rowSummaryChars ? `${row.summary.slice(0, ADMIN_TASK_LIMITS.rowSummaryChars - 1)}…` : row.summary,
    sender: { handle: row.sender_handle, name: row.sender_name },
    recipient: { handle: row.recipient_handle, name: row.recipient_name },
    message_count: row.message_count,
    artifact_count: Number(row.artifact_count),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    status_timestamp: row.status_timestamp.toISOString(),
    ...(row.hold ? { hold: { rule: row.hold.rule, expires_at: row.hold.expires_at, four_eyes: row.hold.four_eyes, outcome: row.hold.outcome } } : {}),
    chain: toTaskChain(row),
    ...(row.last_event_position !== undefined ? { last_event_position: row.last_event_position } : {}),
  };
}
