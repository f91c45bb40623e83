/**
 * The statements that load what the chain rules (`decideChain`, docs/chains.md) decide a create
 * from; the decision itself is not in them.
 */

/**
 * The handoff a create that names no parent serves by the trace its call carries (`$1`, a W3C
 * trace id): of the handoffs in that trace which the caller `$2` received (and may see) the most
 * recent; else, of those it sent, the one nearest the chain's root (the oldest among equals), so
 * that an agent's successive handoffs in one trace are siblings, not a line. Nothing when it took
 * part in none, or when `$1` is null. One range of the trace index, read in a materialized step
 * that no other condition is pushed into, so the plan is that index's whatever the statistics say
 * of the caller's handoffs; task ids are ULIDs, ordered by creation.
 */
export const TRACE_PARENT_SQL = `
WITH traced AS MATERIALIZED (
  SELECT t."id", t."sender_id", t."recipient_id", t."hidden_from_recipient", t."depth" FROM "tasks"."tasks" t WHERE t."trace_id" = $1
)
SELECT t."id"
FROM traced t
WHERE t."sender_id" = $2 OR (t."recipient_id" = $2 AND NOT t."hidden_from_recipient")
ORDER BY (t."recipient_id" = $2) DESC, CASE WHEN t."recipient_id" = $2 THEN t."id" END DESC, t."depth", t."id"
LIMIT 1`;

/**
 * A pair's handoffs of the last minute as the pair rate counts them: from `$1` to `$2` created
 * after `$3`, at most `$4` of them (the pair's limit: the rule only asks whether the limit is
 * reached, so more are never read), and the oldest of them. A range of the sender's index by
 * creation time, oldest first, filtered by recipient.
 */
const PAIR_COUNT = (sender: string, recipient: string, since: string, cap: string): string => `
  SELECT count(*)::int AS "count", min(r."created_at") AS "oldest"
  FROM (
    SELECT t."created_at" FROM "tasks"."tasks" t
    WHERE t."sender_id" = ${sender} AND t."recipient_id" = ${recipient} AND t."created_at" > ${since}
    ORDER BY t."created_at" LIMIT ${cap}
  ) r`;

/**
 * The key of the lock that serialises the creates of the chain of root `root` (an advisory lock
 * held to the end of the transaction).
 */
export const CHAIN_LOCK_KEY = (root: string): string => `hashtext('tasks.chain:' || ${root})`;

/**
 * The recursive step of a chain's `ancestors`: each one's parent, by the primary key one at a time
 * (a LIMIT, never a join the statistics could turn into a scan).
 */
const ANCESTOR_STEP = `SELECT p."id", p."parent_task_id", p."sender_handle", p."depth"
  FROM ancestors a CROSS JOIN LATERAL (
    SELECT q."id", q."parent_task_id", q."sender_handle", q."depth" FROM "tasks"."tasks" q WHERE q."id" = a."parent_task_id" LIMIT 1
  ) p`;

/** The chain's size: its root (which stores no root) and the handoffs below it. */
const TREE_SIZE = (root: string): string =>
  `((SELECT count(*) FROM "tasks"."tasks" n WHERE n."root_task_id" = ${root}) + (SELECT count(*) FROM "tasks"."tasks" r WHERE r."id" = ${root}))::int`;

/**
 * Everything a create decides its chain from, in one statement: the parent (the first of the
 * named ids `$3`, in their order, that the caller `$2` sends, or receives and may see (not held
 * from it); else, when `$3` is empty, the handoff of trace `$1` that TRACE_PARENT_SQL chooses),
 * with its chain's root (itself when it is one); the senders from the root down to the parent,
 * the root's creation and the tree's size; the pair count (PAIR_COUNT, `$2` to `$4` after `$5`,
 * at most `$6`); the key of the chain's lock (CHAIN_LOCK_KEY) and, when `$7`, the lock taken (to
 * the end of the transaction). Without a parent the chain's columns are null, and nothing is
 * locked.
 *
 * Each named id is looked up by the primary key alone, one at a time (a LIMIT that no other
 * condition is pushed into, and that cannot be turned into a join), so the plan is the key's
 * whatever the statistics say of the caller's handoffs or of the table's size (compared as the
 * key's type, `char(26)`: compared as text the key could not serve). The facts are read from the
 * statement's snapshot, taken before the lock was granted: the create checks that the tree's size
 * has not moved since (CREATE_TASK_SQL, `$39`).
 */
export const CHAIN_FACTS_SQL = `
WITH RECURSIVE named AS (
  SELECT t.*, c."position"
  FROM unnest($3::bpchar[]) WITH ORDINALITY AS c("id", "position")
  CROSS JOIN LATERAL (
    SELECT t."id", t."sender_id", t."recipient_id", t."hidden_from_recipient" FROM "tasks"."tasks" t WHERE t."id" = c."id" LIMIT 1
  ) t
), found AS (
  (SELECT n."id" FROM named n
   WHERE n."sender_id" = $2 OR (n."recipient_id" = $2 AND NOT n."hidden_from_recipient")
   ORDER BY n."position" LIMIT 1)
  UNION ALL
  (${TRACE_PARENT_SQL})
), parent AS (
  SELECT t."id", COALESCE(t."root_task_id", t."id") AS "root_task_id", t."depth", t."recipient_handle", t."trace_id", t."trace_span_id"
  FROM "tasks"."tasks" t WHERE t."id" = (SELECT f."id" FROM found f LIMIT 1)
), keyed AS (
  SELECT p.*, ${CHAIN_LOCK_KEY('p."root_task_id"')} AS "lock_key" FROM parent p
), locked AS (
  SELECT k.*, CASE WHEN $7::boolean THEN pg_advisory_xact_lock(k."lock_key") IS NULL ELSE false END AS "locked" FROM keyed k
), ancestors AS (
  SELECT t."id", t."parent_task_id", t."sender_handle", t."depth" FROM "tasks"."tasks" t, locked l WHERE t."id" = l."id"
  UNION ALL
  ${ANCESTOR_STEP}
), pair AS (${PAIR_COUNT('$2', '$4', '$5', '$6')}
)
SELECT l."id", l."root_task_id", l."depth", l."recipient_handle", l."trace_id", l."trace_span_id", l."lock_key", l."locked",
  (SELECT array_agg(a."sender_handle" ORDER BY a."depth") FROM ancestors a) AS "senders",
  (SELECT r."created_at" FROM "tasks"."tasks" r WHERE r."id" = l."root_task_id") AS "root_created_at",
  CASE WHEN l."id" IS NOT NULL THEN ${TREE_SIZE('l."root_task_id"')} END AS "tree_size",
  pair."count" AS "pair_count", pair."oldest" AS "pair_oldest"
FROM pair LEFT JOIN locked l ON true`;

/**
 * Opens a transaction holding the lock of the chain whose key CHAIN_FACTS_SQL answered (`lock_key`),
 * for a create whose facts were read before (its parent found by its trace): both statements in
 * one message, one round trip. The message carries no parameters (a message of several
 * statements cannot), so the key, an integer, is written into it, and anything else refused.
 */
export function beginOnChainLock(lockKey: number): string {
  if (!Number.isSafeInteger(lockKey)) throw new TypeError(`A chain's lock key is an integer, not ${String(lockKey)}`);
  return `BEGIN; SELECT pg_advisory_xact_lock(${lockKey}::bigint)`;
}

/**
 * The chain above and around parent `$1` of root `$2`, read after its lock: the senders from the
 * root down to the parent, the root's creation and the tree's size; and the pair count
 * (PAIR_COUNT, `$3` to `$4` after `$5`, at most `$6`). What a create re-reads when the tree moved
 * between CHAIN_FACTS_SQL and its lock.
 */
export const PARENT_CHAIN_SQL = `
WITH RECURSIVE ancestors AS (
  SELECT t."id", t."parent_task_id", t."sender_handle", t."depth" FROM "tasks"."tasks" t WHERE t."id" = $1
  UNION ALL
  ${ANCESTOR_STEP}
), pair AS (${PAIR_COUNT('$3', '$4', '$5', '$6')}
)
SELECT (SELECT array_agg(a."sender_handle" ORDER BY a."depth") FROM ancestors a) AS "senders",
  (SELECT r."created_at" FROM "tasks"."tasks" r WHERE r."id" = $2) AS "root_created_at",
  ${TREE_SIZE('$2')} AS "tree_size",
  pair."count" AS "pair_count", pair."oldest" AS "pair_oldest"
FROM pair`;

/** The pair count of a create that names no parent and carries no trace (PAIR_COUNT, `$1` to `$2` after `$3`, at most `$4`). */
export const PAIR_RECENT_SQL = PAIR_COUNT('$1', '$2', '$3', '$4');

/**
 * The pair count a create's statement (CREATE_TASK_SQL) checks when its rules decided from a count
 * this process kept (RecentPairs, `$45`): the pair's handoffs (PAIR_COUNT, `$3` to `$7` after `$43`,
 * at most `$44`) as the statement sees them; null when the rules read the count (`$45` null).
 */
export const PAIR_NOW = `CASE WHEN $45::int IS NULL THEN NULL ELSE (SELECT p."count" FROM (${PAIR_COUNT('$3', '$7', '$43::timestamptz', '$44::int')}) p) END`;

/**
 * The guard a linked create's statement carries (CREATE_TASK_SQL): true when no tree size was
 * given (`$39` null), or when chain `$34`'s tree holds `$39` handoffs, as when its facts were read.
 */
export const TREE_UNMOVED = `($39::int IS NULL OR ${TREE_SIZE('$34::text::bpchar')} = $39::int)`;
