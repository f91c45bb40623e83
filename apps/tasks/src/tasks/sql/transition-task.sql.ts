import { TASK_COLUMNS } from '../task-rows';

/** The statements of the one-statement transition (task-transition.ts), and nothing else's. */

export const LOAD_TASK_SQL = `SELECT ${TASK_COLUMNS} FROM "tasks"."tasks" t WHERE t."id" = $1`;

/**
 * The change itself in one statement: the conditional UPDATE (it loses to a concurrent change of
 * the state), its audit row and its outbox event, plus the artifacts and the caller's
 * unread count for the reply. One statement per state-timestamp column, so each is prepared once.
 */
export function changeStateSql(stampColumn: string | undefined): string {
  return `
WITH changed AS (
  UPDATE "tasks"."tasks" t
  SET "state" = $3, "status_timestamp" = $4, "updated_at" = $4, "version" = t."version" + 1,
      ${stampColumn ? `"${stampColumn}" = $4,` : ''}
      "result_summary" = COALESCE($5, t."result_summary"), "reason" = COALESCE($6, t."reason")
  WHERE t."id" = $1 AND t."state" = $2
  RETURNING ${TASK_COLUMNS}
), audit AS (
  INSERT INTO "tasks"."audit_log" ("task_id", "actor_id", "transition", "from_state", "to_state", "session_id", "reason", "at")
  SELECT c."id", $7, $8, $2, $3, $9, $6, $4 FROM changed c
), outbox AS (
  INSERT INTO "tasks"."outbox_events" ("id", "subject", "type", "task_id", "payload", "created_at", "trace_parent")
  SELECT $10, $11, $12, c."id", $13, $4, $14 FROM changed c
)
SELECT c.*,
  (SELECT COALESCE(json_agg(a ORDER BY a."position"), '[]'::json) FROM "tasks"."artifacts" a WHERE a."task_id" = c."id") AS "artifacts",
  (SELECT count(*)::int FROM "tasks"."messages" m
    WHERE m."task_id" = c."id" AND m."author_id" <> $7
      AND m."sequence_no" > COALESCE((SELECT r."last_read_sequence_no" FROM "tasks"."read_cursors" r
                                      WHERE r."task_id" = c."id" AND r."participant_id" = $7), 0)) AS "unread"
FROM changed c`;
}
