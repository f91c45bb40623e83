import { OPEN_HANDOFF_STATES } from '@app/contracts';

/** The open states as SQL literals: the same list as the predicate of the partial index `tasks_open_sender_org_idx`, so the planner uses it. */
export const OPEN_HANDOFF_STATES_SQL = OPEN_HANDOFF_STATES.map((state) => `'${state}'`).join(', ');

/**
 * The open handoffs whose sender's handle names the org `$1`, counted up to `$2` (the org's
 * quota) and no further: the index `tasks_open_sender_org_idx` finds them, and the count stops at
 * the quota however many there are.
 */
export const OPEN_HANDOFFS_OF_ORG_SQL = `SELECT count(*)::int AS "open" FROM (
    SELECT 1 FROM "tasks"."tasks" WHERE split_part("sender_handle", '@', 2) = $1 AND "state" IN (${OPEN_HANDOFF_STATES_SQL}) LIMIT $2
  ) AS "counted"`;
