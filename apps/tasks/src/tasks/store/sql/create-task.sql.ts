import { addStoredBytesSql } from '../stored-bytes';
import { PAIR_NOW, TREE_UNMOVED } from './chain-facts.sql';

/**
 * The statements of the create use case (create-write.ts), and nothing else's.
 *
 * The whole create in one statement (one round trip, committed on its own unless a context is
 * claimed): task, first message, artifacts, audit row, idempotency keys and the `created` outbox
 * event (`held` for a task created `held`, `$29`, with its hold `$30` and deadline `$31`; `$32` who answers its tool prompts when people do; `$33` its parent, `$34` its chain's root, `$35` its depth; `$36` its trace id and `$37` the span its deliveries continue; `$38` its root's sender; `$39` its chain's tree size as the create's rules saw it, null when it has no parent or its facts were read under the chain's lock; `$40` its sender's org, `$41` the shard of the org's stored-bytes counter and `$42` the bytes it stores, docs/orgs.md#quotas; `$45` the pair's count its rules decided from when this process kept it, null when they read it, with `$43` the start of the pair rate's minute and `$44` its limit). Nothing is written when one of the sender's keys already exists (`known_key`), when the pair
 * holds more handoffs than `$45` (`pair_moved`), or when the context `$2` already holds tasks none
 * of which is the sender's, or holds `$27` tasks; the answer says which. Two creates racing on one
 * key meet the keys' primary key and one of them fails whole. It answers the event's position, for its publish after the commit (the first event
 * of a new task has none before it to wait for).
 */
export const CREATE_TASK_SQL = `
WITH known_key AS (
  SELECT 1 FROM "tasks"."idempotency_keys" k
  WHERE k."sender_id" = $3 AND (k."scope", k."key") IN (SELECT * FROM unnest($18::text[], $19::text[]))
), context_tasks AS (
  SELECT count(*)::int AS "total", count(*) FILTER (WHERE c."sender_id" = $3 OR c."recipient_id" = $3)::int AS "mine"
  FROM "tasks"."tasks" c WHERE c."context_id" = $2
), chain AS (
  SELECT ${TREE_UNMOVED} AS "unmoved"
), pair AS (
  SELECT ${PAIR_NOW} AS "before"
), created_task AS (
  INSERT INTO "tasks"."tasks" ("id", "context_id", "sender_id", "sender_handle", "sender_name", "sender_role",
    "recipient_id", "recipient_handle", "recipient_name", "recipient_role", "state", "intent", "summary", "proposed_action",
    "metadata", "message_count", "created_at", "updated_at", "status_timestamp", "hold", "hold_expires_at", "hidden_from_recipient",
    "tool_prompts", "parent_task_id", "root_task_id", "depth", "trace_id", "trace_span_id", "root_sender_handle", "sender_stored_bytes")
  SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $29::text, $11, $12, $13, $14, 1, $15, $15, $15, $30::jsonb, $31::timestamptz, $29::text = 'held',
    $32::jsonb, $33::text, $34::text, $35::int, $36::text, $37::text, $38::text, $42::bigint
  FROM context_tasks ct, chain, pair
  WHERE chain."unmoved" AND (pair."before" IS NULL OR pair."before" <= $45::int) AND NOT EXISTS (SELECT 1 FROM known_key) AND (ct."total" = 0 OR ct."mine" > 0) AND ct."total" < $27::int
  RETURNING "id"
), message AS (
  INSERT INTO "tasks"."messages" ("task_id", "sequence_no", "id", "author", "author_id", "from_handle", "body", "parts", "payload", "created_at", "size_bytes")
  SELECT t."id", 1, $16, 'sender', $3, $4, $12, $17, $20, $15, $26 FROM created_task t
  RETURNING "task_id"
), artifact AS (
  INSERT INTO "tasks"."artifacts" ("task_id", "artifact_id", "position", "type", "fields", "name", "description", "parts", "metadata",
    "last_chunk", "created_at", "updated_at", "size_bytes")
  SELECT t."id", a."artifact_id", a."position", a."type", a."fields", a."name", a."description", a."parts", a."metadata", a."last_chunk", $15, $15,
    a."size_bytes"
  FROM created_task t, jsonb_to_recordset($21::jsonb) AS a("artifact_id" text, "position" int, "type" text, "fields" jsonb, "name" text,
    "description" text, "parts" jsonb, "metadata" jsonb, "last_chunk" boolean, "size_bytes" int)
), audit AS (
  INSERT INTO "tasks"."audit_log" ("task_id", "actor_id", "transition", "from_state", "to_state", "at")
  SELECT t."id", $3, 'create', NULL, $29::text, $15 FROM created_task t
), idempotency AS (
  INSERT INTO "tasks"."idempotency_keys" ("sender_id", "scope", "key", "request_hash", "task_id", "sequence_no", "created_task")
  SELECT $3, k."scope", k."key", $22, m."task_id", 1, true FROM message m, unnest($18::text[], $19::text[]) AS k("scope", "key")
), stored AS (
  ${addStoredBytesSql('$40::text', '$41::smallint', '$42::bigint', 'created_task')}
), outbox AS (
  INSERT INTO "tasks"."outbox_events" ("id", "subject", "type", "task_id", "payload", "created_at", "trace_parent")
  SELECT $23, $24, CASE WHEN $29::text = 'held' THEN 'held' ELSE 'created' END, t."id", $25, $15, $28 FROM created_task t
  RETURNING "position"
)
SELECT (SELECT count(*) FROM created_task)::int AS "created", EXISTS (SELECT 1 FROM known_key) AS "known_key",
  ct."total" AS "context_total", ct."mine" AS "context_mine", (SELECT "position"::text FROM outbox) AS "event_position",
  NOT (SELECT chain."unmoved" FROM chain) AS "tree_moved", (SELECT pair."before" FROM pair) AS "pair_before",
  COALESCE((SELECT pair."before" > $45::int FROM pair), false) AS "pair_moved"
FROM context_tasks ct`;

/**
 * Serialises the creates of one named context (held to the end of the transaction the create
 * statement then runs in), so that its count of the context's tasks is not overtaken.
 */
export const LOCK_CONTEXT_SQL = `SELECT pg_advisory_xact_lock(hashtext('tasks.context:' || $1))`;

/**
 * The lock of a create's guard (CreateGuard), by its name, held to the end of the transaction: the
 * first a guarded create takes. A 64-bit key, so two names rarely share one (a shared one only
 * serialises more creates than needed).
 */
export const LOCK_CREATE_GUARD_SQL = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`;
