import { TERMINAL_STATES } from '@app/contracts';
import { OUTBOX_PUBLISHED, OUTBOX_TABLE } from '../outbox/outbox.constants';

/** The terminal states as the partial index `tasks_terminal_status_idx` lists them (the same list, so the planner uses it). */
export const TERMINAL_STATES_SQL = TERMINAL_STATES.map((state) => `'${state}'`).join(', ');

export const OUTBOX_HORIZON_TABLE = '"tasks"."outbox_horizon"';

/** The highest outbox position deleted so far (0 before the first delete): every event after it is kept. As a scalar subquery. */
export const OUTBOX_DELETED_THROUGH_SQL = `SELECT "deleted_through" FROM ${OUTBOX_HORIZON_TABLE} WHERE "id" = 1`;
/** The same, as a row with its position as text. */
export const OUTBOX_HORIZON_SQL = `SELECT "deleted_through"::text AS "position" FROM ${OUTBOX_HORIZON_TABLE} WHERE "id" = 1`;

const MAX_BIGINT = '9223372036854775807';

/**
 * One batch of published outbox rows written before `$1`, at most `$2`, oldest position first, and the
 * horizon moved to the highest position deleted, in one statement (so one transaction). The scan
 * stops at the first row inside the window (positions follow writing order), so a batch never reads
 * the kept rows; rows another transaction holds (the relay marking them) are skipped, not waited for.
 */
export const DELETE_OUTBOX_BATCH_SQL = `
WITH "bound" AS (
  SELECT COALESCE((SELECT "position" FROM ${OUTBOX_TABLE} WHERE "created_at" >= $1 ORDER BY "position" LIMIT 1), ${MAX_BIGINT}) AS "position"
), "doomed" AS (
  SELECT "position" FROM ${OUTBOX_TABLE}
  WHERE "position" < (SELECT "position" FROM "bound") AND "created_at" < $1 AND ${OUTBOX_PUBLISHED}
  ORDER BY "position" LIMIT $2 FOR UPDATE SKIP LOCKED
), "deleted" AS (
  DELETE FROM ${OUTBOX_TABLE} WHERE "position" IN (SELECT "position" FROM "doomed") RETURNING "position"
), "moved" AS (
  UPDATE ${OUTBOX_HORIZON_TABLE} SET "deleted_through" = GREATEST("deleted_through", (SELECT max("position") FROM "deleted"))
  WHERE "id" = 1 AND EXISTS (SELECT 1 FROM "deleted") RETURNING 1
)
SELECT count(*)::int AS "deleted" FROM "deleted"`;

/** One batch of idempotency keys remembered before `$1`, at most `$2`, through their creation-time index. */
export const DELETE_IDEMPOTENCY_BATCH_SQL = `
DELETE FROM "tasks"."idempotency_keys" WHERE ctid = ANY(ARRAY(
  SELECT ctid FROM "tasks"."idempotency_keys" WHERE "created_at" < $1 ORDER BY "created_at" LIMIT $2 FOR UPDATE SKIP LOCKED
))`;

/**
 * One batch of tasks terminal since before `$1`, at most `$2`, deleted with everything they hold:
 * their messages, artifacts, idempotency keys, read cursors, audit rows and push configs go by the
 * foreign keys' cascade, their outbox rows in the same statement. A task with an event not published
 * yet waits for a later run; a task another transaction holds is skipped. What its parties wrote
 * into it is taken off their orgs' stored bytes (docs/orgs.md#quotas) in the same statement.
 */
export const DELETE_TERMINAL_TASKS_BATCH_SQL = `
WITH "doomed" AS (
  SELECT t."id" FROM "tasks"."tasks" t
  WHERE t."state" IN (${TERMINAL_STATES_SQL}) AND t."status_timestamp" < $1
    AND NOT EXISTS (SELECT 1 FROM ${OUTBOX_TABLE} o WHERE o."task_id" = t."id" AND NOT (${OUTBOX_PUBLISHED}))
  ORDER BY t."status_timestamp" LIMIT $2 FOR UPDATE OF t SKIP LOCKED
), "events" AS (
  DELETE FROM ${OUTBOX_TABLE} WHERE "task_id" IN (SELECT "id" FROM "doomed") RETURNING 1
), "gone" AS (
  DELETE FROM "tasks"."tasks" WHERE "id" IN (SELECT "id" FROM "doomed")
  RETURNING "sender_handle", "recipient_handle", "sender_stored_bytes", "recipient_stored_bytes"
), "freed" AS (
  SELECT f."org", sum(f."bytes")::bigint AS "bytes" FROM (
    SELECT split_part("sender_handle", '@', 2) AS "org", "sender_stored_bytes" AS "bytes" FROM "gone"
    UNION ALL
    SELECT split_part("recipient_handle", '@', 2), "recipient_stored_bytes" FROM "gone"
  ) f GROUP BY f."org" HAVING sum(f."bytes") <> 0
), "released" AS (
  INSERT INTO "tasks"."org_stored_bytes" ("org", "shard", "bytes") SELECT "org", 0, -"bytes" FROM "freed"
  ON CONFLICT ("org", "shard") DO UPDATE SET "bytes" = "tasks"."org_stored_bytes"."bytes" + EXCLUDED."bytes"
)
SELECT (SELECT count(*) FROM "gone")::int AS "tasks", (SELECT count(*) FROM "events")::int AS "events"`;
