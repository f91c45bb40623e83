import { TASK_LIMITS } from '@app/contracts';
import type { MessageRow } from './task-rows';

/** What a message's fixed fields (ids, author, timestamps) add to its stored `size_bytes` in a reply. */
const MESSAGE_OVERHEAD_BYTES = 256;

/** A message's `size_bytes`: its body, and its parts and payload as the JSON that was stored. */
export function messageBytes(body: string, partsJson: string, payloadJson: string): number {
  return Buffer.byteLength(body) + Buffer.byteLength(partsJson) + Buffer.byteLength(payloadJson);
}

/**
 * A JSON array of the messages of task `task` after sequence number `after` that fit one
 * reply's byte budget (`budget`, an SQL expression: `TASK_LIMITS.replyMessageBytes` unless given; at least one message): the oldest ones
 * when `keepOldest` (paging on with `after_sequence_no`), the newest ones otherwise. The budget is
 * counted on the stored sizes, so only the rows that fit are loaded. The arguments are SQL
 * expressions (parameters or columns of the enclosing query).
 */
export function messagesWithinBudgetSql(task: string, after: string, keepOldest: string, budget = String(TASK_LIMITS.replyMessageBytes)): string {
  const order = `CASE WHEN ${keepOldest} THEN b."sequence_no" ELSE -b."sequence_no" END`;
  return `(SELECT COALESCE(json_agg(w ORDER BY w."sequence_no"), '[]'::json) FROM (
      SELECT b.*, sum(b."size_bytes" + ${MESSAGE_OVERHEAD_BYTES}) OVER (ORDER BY ${order}) AS "running", row_number() OVER (ORDER BY ${order}) AS "rank"
      FROM "tasks"."messages" b WHERE b."task_id" = ${task} AND b."sequence_no" > ${after}
    ) w WHERE w."rank" = 1 OR w."running" <= ${budget})`;
}

/** A message row as `json_agg` gives it (its timestamp as text). */
export type JsonMessage = Omit<MessageRow, 'created_at'> & { created_at: string };

export function messageFromJson(message: JsonMessage): MessageRow {
  return { ...message, created_at: new Date(message.created_at) };
}
