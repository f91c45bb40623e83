/**
 * The statements that load what the chain rules (`decideChain`, docs/chains.md) decide a create
 * from; the decision itself is not in them.
 */

/**
 * The parent among `$1` (in the order given): the first task the caller `$2` sends, or receives
 * and may see (not held from it), with its chain's root (itself when it is one); and the chain's
 * lock taken (to the end of the transaction), so that the facts read next are not overtaken by
 * another create of the chain. Answers nothing, locking nothing, when none is the caller's.
 */
export const PARENT_TASK_SQL = `
SELECT p.*, pg_advisory_xact_lock(hashtext('tasks.chain:' || p."root_task_id")) IS NULL AS "locked"
FROM (
  SELECT t."id", COALESCE(t."root_task_id", t."id") AS "root_task_id", t."depth", t."recipient_handle", t."trace_id", t."trace_span_id"
  FROM unnest($1::text[]) WITH ORDINALITY AS c("id", "position")
  JOIN "tasks"."tasks" t ON t."id" = c."id"
  WHERE t."sender_id" = $2 OR (t."recipient_id" = $2 AND NOT t."hidden_from_recipient")
  ORDER BY c."position"
  LIMIT 1
) p`;

/**
 * The handoff a create that names no parent serves by the trace its call carries (`$1`, a W3C
 * trace id): of the handoffs in that trace which the caller `$2` received (and may see) the most
 * recent; else, of those it sent, the one nearest the chain's root (the oldest among equals), so
 * that an agent's successive handoffs in one trace are siblings, not a line. Nothing when it took
 * part in none. One range of the trace index; task ids are ULIDs, ordered by creation.
 */
export const TRACE_PARENT_SQL = `
SELECT t."id"
FROM "tasks"."tasks" t
WHERE t."trace_id" = $1 AND (t."sender_id" = $2 OR (t."recipient_id" = $2 AND NOT t."hidden_from_recipient"))
ORDER BY (t."recipient_id" = $2) DESC, CASE WHEN t."recipient_id" = $2 THEN t."id" END DESC, t."depth", t."id"
LIMIT 1`;

/**
 * The chain above and around parent `$1` of root `$2`, read after its lock: the senders from the
 * root down to the parent, the root's creation and the tree's size (the root, which stores no
 * root, and the handoffs below it); and the handoffs from `$3` to `$4` created after `$5`, as
 * PAIR_RECENT_SQL counts them.
 */
export const PARENT_CHAIN_SQL = `
WITH RECURSIVE ancestors AS (
  SELECT t."id", t."parent_task_id", t."sender_handle", t."depth" FROM "tasks"."tasks" t WHERE t."id" = $1
  UNION ALL
  SELECT p."id", p."parent_task_id", p."sender_handle", p."depth"
  FROM "tasks"."tasks" p JOIN ancestors a ON p."id" = a."parent_task_id"
), pair AS (
  SELECT count(*)::int AS "count", min(t."created_at") AS "oldest"
  FROM "tasks"."tasks" t WHERE t."sender_id" = $3 AND t."recipient_id" = $4 AND t."created_at" > $5
)
SELECT (SELECT array_agg(a."sender_handle" ORDER BY a."depth") FROM ancestors a) AS "senders",
  (SELECT r."created_at" FROM "tasks"."tasks" r WHERE r."id" = $2) AS "root_created_at",
  ((SELECT count(*) FROM "tasks"."tasks" n WHERE n."root_task_id" = $2) + (SELECT count(*) FROM "tasks"."tasks" r WHERE r."id" = $2))::int AS "tree_size",
  pair."count" AS "pair_count", pair."oldest" AS "pair_oldest"
FROM pair`;

/**
 * The handoffs from `$1` to `$2` created after `$3`, and the oldest of them: a range of the
 * sender's index by creation time (a minute of one sender's handoffs), filtered by recipient.
 */
export const PAIR_RECENT_SQL = `
SELECT count(*)::int AS "count", min(t."created_at") AS "oldest"
FROM "tasks"."tasks" t
WHERE t."sender_id" = $1 AND t."recipient_id" = $2 AND t."created_at" > $3`;
