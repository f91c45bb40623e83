import { TASK_LIMITS } from '@app/contracts';
import { messagesWithinBudgetSql } from '../message-budget';
import { TASK_COLUMNS } from '../task-rows';
import { unreadCountSql } from './unread-count.sql';

/** The statement of the read use case (read-query.ts), and nothing else's. */

/**
 * What a read's messages may take: the message budget less the task's own texts (its summary repeats
 * a first text part of up to 100,000 characters), so that the whole reply, with the task's artifacts
 * (at most TASK_LIMITS.artifactBytesPerTask), stays within one NATS message.
 */
const MESSAGE_BUDGET_SQL = `(${TASK_LIMITS.replyMessageBytes} - octet_length(t."summary") - octet_length(COALESCE(t."result_summary", '')) - octet_length(COALESCE(t."reason", ''))
  - octet_length(COALESCE(t."proposed_action"::text, '')) - octet_length(t."metadata"::text))`;

/**
 * A participant's read of a task in one statement (one snapshot, one round trip): the task,
 * the caller's unread count as it was before this read, the requested messages within the reply's
 * byte budget (the oldest ones when paging with `after_sequence_no`, `$6`, the newest otherwise) and
 * the artifacts, and, unless `$5` is false, the caller's read cursor moved to the last message. A read with
 * nothing new to mark writes nothing (so a polling GetTask is a read-only transaction). An outsider (and
 * the recipient of a task hidden from it, held for approval) gets the task's row with a null party and marks nothing.
 */
export const READ_TASK_SQL = `
WITH t AS (
  SELECT ${TASK_COLUMNS},
    CASE WHEN t."sender_id" = $2 THEN 'sender' WHEN t."recipient_id" = $2 AND NOT t."hidden_from_recipient" THEN 'recipient' END AS "party",
    ($7::text IS NULL OR CASE WHEN t."sender_id" = $2 THEN t."recipient_id" ELSE t."sender_id" END = $7::text) AS "on_endpoint"
  FROM "tasks"."tasks" t WHERE t."id" = $1
), mark AS (
  INSERT INTO "tasks"."read_cursors" ("task_id", "participant_id", "last_read_sequence_no", "updated_at")
  SELECT t."id", $2, t."message_count", now() FROM t WHERE t."party" IS NOT NULL AND t."on_endpoint" AND $5
  ON CONFLICT ("task_id", "participant_id") DO UPDATE
    SET "last_read_sequence_no" = EXCLUDED."last_read_sequence_no", "updated_at" = now()
    WHERE "read_cursors"."last_read_sequence_no" < EXCLUDED."last_read_sequence_no"
)
SELECT t.*,
  ${unreadCountSql('t."id"', '$2')}::int AS "unread",
  CASE WHEN $3::int = 0 THEN '[]'::json ELSE ${messagesWithinBudgetSql(
    't."id"',
    'GREATEST($4::int, CASE WHEN $3::int IS NULL THEN 0 ELSE t."message_count" - $3::int END)',
    '$6::boolean',
    MESSAGE_BUDGET_SQL,
  )} END AS "messages",
  (SELECT COALESCE(json_agg(a ORDER BY a."position"), '[]'::json) FROM "tasks"."artifacts" a WHERE a."task_id" = t."id") AS "artifacts"
FROM t`;
