import { earlierUnpublishedSql, OWN_POSITIONS_SQL } from '../outbox/committed-events';
import { TASK_COLUMNS } from '../tasks/store/task-rows';

/** The statements of the end of a hold (hold-end.ts), and nothing else's. */

/**
 * The end of a hold in one statement: the task leaves `held` (approved: pending and visible to its
 * recipient; denied or expired: rejected), conditional on the state and version read, so that an
 * approval racing the deadline, a cancel or another approver either wins or writes nothing; with
 * its audit row and its events, in order; answering the events to publish after the commit (the
 * task's earlier ones not published yet, and its own with their positions).
 */
export const END_HOLD_SQL = `
WITH changed AS (
  UPDATE "tasks"."tasks" t
  SET "state" = $2::text, "status_timestamp" = $3::timestamptz, "updated_at" = $3::timestamptz, "version" = t."version" + 1,
    "hidden_from_recipient" = $4::boolean, "hold" = $5::jsonb,
    "rejected_at" = CASE WHEN $2::text = 'rejected' THEN $3::timestamptz ELSE t."rejected_at" END, "reason" = COALESCE($6::text, t."reason")
  WHERE t."id" = $1 AND t."state" = 'held' AND t."version" = $7
  RETURNING ${TASK_COLUMNS}
), audit AS (
  INSERT INTO "tasks"."audit_log" ("task_id", "actor_id", "transition", "from_state", "to_state", "reason", "at")
  SELECT c."id", $8::text, $9::text, 'held', $2::text, $10::text, $3::timestamptz FROM changed c
), outbox AS (
  INSERT INTO "tasks"."outbox_events" ("id", "subject", "type", "task_id", "payload", "created_at", "trace_parent")
  SELECT e."id", e."subject", e."type", c."id", e."payload", $3, $11
  FROM changed c, ROWS FROM (jsonb_to_recordset($12::jsonb) AS ("id" uuid, "subject" text, "type" text, "payload" jsonb)) WITH ORDINALITY
    AS e("id", "subject", "type", "payload", "ordinal")
  ORDER BY e."ordinal"
  RETURNING "id", "position"
)
SELECT c.*, ${earlierUnpublishedSql('c."id"')} AS "earlier_events", ${OWN_POSITIONS_SQL} AS "event_positions" FROM changed c`;

/** The first message of a task: what the `created` event of an approved handoff carries. */
export const FIRST_MESSAGE_SQL = `SELECT * FROM "tasks"."messages" WHERE "task_id" = $1 AND "sequence_no" = 1`;

/** Held tasks past their deadline, oldest deadline first (tasks_hold_expires_idx). */
export const EXPIRED_HOLDS_SQL = `SELECT "id" FROM "tasks"."tasks" WHERE "state" = 'held' AND "hold_expires_at" <= $1 ORDER BY "hold_expires_at" LIMIT $2`;
