import { messagesWithinBudgetSql } from '../message-budget';
import { TASK_COLUMNS } from '../task-rows';

/** The statements of a change to an existing task, an append or a transition (task-change.ts), and nothing else's. */

/** The task with its artifacts (by position), as a change's rules and artifact caps are checked on them. */
export const LOAD_TASK_SQL = `SELECT ${TASK_COLUMNS},
  (SELECT COALESCE(json_agg(a ORDER BY a."position"), '[]'::json) FROM "tasks"."artifacts" a WHERE a."task_id" = t."id") AS "artifacts"
FROM "tasks"."tasks" t WHERE t."id" = $1`;

/**
 * The whole change in one statement: the UPDATE conditional on the state and version read
 * (it loses to any concurrent change of the task, and then writes nothing), the state change
 * (`$8`) with its audit row, the message (`$12`, numbered after the task's last one), the
 * artifacts added or changed (`$21`), the sender's idempotency keys (`$24`-`$27`), the outbox
 * events in order (`$22`), and the caller's unread count for the reply. One statement per
 * state-timestamp column, so each is prepared once.
 */
export function changeTaskSql(stampColumn: string | undefined): string {
  return `
WITH changed AS (
  UPDATE "tasks"."tasks" t
  SET "state" = $4, "updated_at" = $5, "version" = t."version" + 1,
      "message_count" = t."message_count" + CASE WHEN $12::boolean THEN 1 ELSE 0 END,
      "status_timestamp" = CASE WHEN $8::boolean THEN $5 ELSE t."status_timestamp" END,
      ${stampColumn ? `"${stampColumn}" = $5,` : ''}
      "result_summary" = CASE WHEN $8::boolean THEN COALESCE($6, t."result_summary") ELSE t."result_summary" END,
      "reason" = CASE WHEN $8::boolean THEN COALESCE($7, t."reason") ELSE t."reason" END
  WHERE t."id" = $1 AND t."state" = $2 AND t."version" = $3
  RETURNING ${TASK_COLUMNS}
), message AS (
  INSERT INTO "tasks"."messages" ("task_id", "sequence_no", "id", "author", "author_id", "from_handle", "body", "parts", "payload", "created_at", "size_bytes")
  SELECT c."id", c."message_count", $13, $14, $15, $16, $17, $18, $19, $5, $20 FROM changed c WHERE $12::boolean
), artifact AS (
  INSERT INTO "tasks"."artifacts" ("task_id", "artifact_id", "position", "type", "fields", "name", "description", "parts", "metadata",
    "last_chunk", "created_at", "updated_at", "size_bytes")
  SELECT c."id", a."artifact_id", a."position", a."type", a."fields", a."name", a."description", a."parts", a."metadata", a."last_chunk", $5, $5,
    a."size_bytes"
  FROM changed c, jsonb_to_recordset($21::jsonb) AS a("artifact_id" text, "position" int, "type" text, "fields" jsonb, "name" text,
    "description" text, "parts" jsonb, "metadata" jsonb, "last_chunk" boolean, "size_bytes" int)
  ON CONFLICT ("task_id", "artifact_id") DO UPDATE SET "type" = EXCLUDED."type", "fields" = EXCLUDED."fields", "name" = EXCLUDED."name",
    "description" = EXCLUDED."description", "parts" = EXCLUDED."parts", "metadata" = EXCLUDED."metadata", "last_chunk" = EXCLUDED."last_chunk",
    "updated_at" = EXCLUDED."updated_at", "size_bytes" = EXCLUDED."size_bytes"
), idempotency AS (
  INSERT INTO "tasks"."idempotency_keys" ("sender_id", "scope", "key", "request_hash", "task_id", "sequence_no", "created_task")
  SELECT $24, k."scope", k."key", $27, c."id", c."message_count", false FROM changed c, unnest($25::text[], $26::text[]) AS k("scope", "key")
), audit AS (
  INSERT INTO "tasks"."audit_log" ("task_id", "actor_id", "transition", "from_state", "to_state", "session_id", "reason", "at")
  SELECT c."id", $9, $10, $2, $4, $11, $7, $5 FROM changed c WHERE $8::boolean
), outbox AS (
  INSERT INTO "tasks"."outbox_events" ("id", "subject", "type", "task_id", "payload", "created_at", "trace_parent")
  SELECT e."id", e."subject", e."type", c."id", e."payload", $5, $23
  FROM changed c, ROWS FROM (jsonb_to_recordset($22::jsonb) AS ("id" uuid, "subject" text, "type" text, "payload" jsonb)) WITH ORDINALITY
    AS e("id", "subject", "type", "payload", "ordinal")
  ORDER BY e."ordinal"
)
SELECT c.*,
  (SELECT count(*)::int FROM "tasks"."messages" m
    WHERE m."task_id" = c."id" AND m."author_id" <> $9
      AND m."sequence_no" > COALESCE((SELECT r."last_read_sequence_no" FROM "tasks"."read_cursors" r
                                      WHERE r."task_id" = c."id" AND r."participant_id" = $9), 0)) AS "unread"
FROM changed c`;
}

/** The history a change's reply carries: the newest messages after `$2`, within a reply's byte budget. */
export const CHANGE_HISTORY_SQL = `SELECT ${messagesWithinBudgetSql('$1', '$2', 'false')} AS "messages"`;
