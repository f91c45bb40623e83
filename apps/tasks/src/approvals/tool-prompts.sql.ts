import { TASK_COLUMNS } from '../tasks/store/task-rows';

/** The statements of tool prompts answered by people (tool-prompt-answer.ts, pending-tool-prompts.ts), and nothing else's. */

/** The question a recipient's message asked: its `permission_request` payload, by request id. */
export const TOOL_PROMPT_REQUEST_SQL = `
SELECT m."payload" -> 'permission_request' AS "request", m."sequence_no"
FROM "tasks"."messages" m
WHERE m."task_id" = $1 AND m."author" = 'recipient' AND m."payload" -> 'permission_request' ->> 'request_id' = $2
ORDER BY m."sequence_no" LIMIT 1`;

/**
 * The answer in one statement: appended to the task's `tool_prompts.answers` on the condition that
 * the task's tool prompts are the approvers', the task has not ended, the request has no answer yet
 * and the task keeps fewer than `$5` answers (two people answering at once: one wins, the other
 * changes nothing); with its audit row.
 */
export const ANSWER_TOOL_PROMPT_SQL = `
WITH changed AS (
  UPDATE "tasks"."tasks" t
  SET "tool_prompts" = jsonb_set(t."tool_prompts", '{answers}', (t."tool_prompts" -> 'answers') || jsonb_build_array($2::jsonb)), "updated_at" = $3::timestamptz
  WHERE t."id" = $1 AND t."tool_prompts" IS NOT NULL AND t."state" IN ('pending', 'accepted', 'input_required')
    AND NOT (t."tool_prompts" -> 'answers') @> jsonb_build_array(jsonb_build_object('request_id', $4::text))
    AND jsonb_array_length(t."tool_prompts" -> 'answers') < $5::int
  RETURNING ${TASK_COLUMNS}
), audit AS (
  INSERT INTO "tasks"."audit_log" ("task_id", "actor_id", "transition", "from_state", "to_state", "reason", "at")
  SELECT c."id", $6::text, $7::text, c."state", c."state", $8::text, $3::timestamptz FROM changed c
)
SELECT c.* FROM changed c`;

/**
 * The open tool prompts people answer, oldest question first: asked by the recipient of a task
 * whose tool prompts are the approvers' (tasks_tool_prompts_open_idx), not answered, before their
 * deadline (`$1` now; compared as the ISO text the worker writes, so that no payload can fail the query), on a task
 * that has not ended; at most `$2`; `$3` null, or the orgs one of whose the task's parties must be in.
 */
export const PENDING_TOOL_PROMPTS_SQL = `
SELECT t."id" AS "task_id", t."sender_handle", t."recipient_handle", t."summary", t."state", t."tool_prompts" ->> 'rule' AS "rule",
  (t."tool_prompts" ->> 'four_eyes')::boolean AS "four_eyes", m."sequence_no", m."created_at", m."payload" -> 'permission_request' AS "request"
FROM "tasks"."tasks" t
JOIN "tasks"."messages" m ON m."task_id" = t."id" AND m."author" = 'recipient' AND m."payload" ? 'permission_request'
WHERE t."tool_prompts" IS NOT NULL AND t."state" IN ('pending', 'accepted', 'input_required')
  AND NOT (t."tool_prompts" -> 'answers') @> jsonb_build_array(jsonb_build_object('request_id', m."payload" -> 'permission_request' ->> 'request_id'))
  AND m."payload" -> 'permission_request' ->> 'expires_at' > to_char($1::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  AND ($3::text[] IS NULL OR split_part(t."sender_handle", '@', 2) = ANY($3::text[]) OR split_part(t."recipient_handle", '@', 2) = ANY($3::text[]))
ORDER BY m."created_at", t."id", m."sequence_no"
LIMIT $2`;
