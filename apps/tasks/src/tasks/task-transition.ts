import type pg from 'pg';
import { RelayError, type TransitionRequest } from '@app/contracts';
import { currentTraceParent } from '@app/tracing';
import { checkTransition, partyOf, STATE_TIMESTAMP_COLUMN } from './state-machine';
import { taskEvent } from './task-events';
import { TASK_COLUMNS, type ArtifactRow, type TaskRow } from './task-rows';

/** A state change as it was committed, with what the caller's reply shows of the task. */
export interface CommittedTransition {
  task: TaskRow;
  artifacts: ArtifactRow[];
  unread: number;
}

const LOAD_TASK_SQL = `SELECT ${TASK_COLUMNS} FROM "tasks"."tasks" t WHERE t."id" = $1`;

/**
 * The change itself in one statement: the conditional UPDATE (it loses to a concurrent change of
 * the state), its audit row and its outbox event, plus the artifacts and the caller's
 * unread count for the reply. One statement per state-timestamp column, so each is prepared once.
 */
function changeSql(stampColumn: string | undefined): string {
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

/** Whether a transition can take this path: a state change with no message or artifacts, answered without history. */
export function transitionableInOneStatement(request: TransitionRequest): boolean {
  return request.transition !== 'progress' && !request.message && !(request.artifacts && request.artifacts.length > 0) && request.history_length === 0;
}

/**
 * A state change in two round trips and no explicit transaction: the task is read, the rule is
 * checked against its state and the caller's party, then one statement changes it on the
 * condition that the state is still the one read (else `state_changed`, nothing written).
 */
export async function transitionInOneStatement(pool: pg.Pool, request: TransitionRequest): Promise<CommittedTransition> {
  const taskId = request.task_id.toUpperCase();
  const { rows: found } = await pool.query<TaskRow>({ name: 'tasks-load-task', text: LOAD_TASK_SQL, values: [taskId] });
  const current = found[0];
  if (!current) throw new RelayError('thread_not_found', `No task with id ${request.task_id}`, { task_id: request.task_id });
  const party = partyOf(current, request.caller_id, request.counterpart_id);
  const rule = checkTransition(request.transition, request.cancel_mode, current.state, party);
  const to = rule.to as NonNullable<typeof rule.to>;
  const now = new Date();
  const stampColumn = STATE_TIMESTAMP_COLUMN[to];
  const expected: TaskRow = {
    ...current,
    state: to,
    result_summary: request.result_summary ?? current.result_summary,
    reason: request.reason ?? current.reason,
    version: current.version + 1,
    updated_at: now,
    status_timestamp: now,
    ...(stampColumn ? { [stampColumn]: now } : {}),
  };
  const event = taskEvent(rule.event as NonNullable<typeof rule.event>, expected, null, now);
  const { rows } = await pool.query<TaskRow & { artifacts: ArtifactRow[]; unread: number }>({
    name: `tasks-transition-${stampColumn ?? 'none'}`,
    text: changeSql(stampColumn),
    values: [
      current.id,
      current.state,
      to,
      now,
      request.result_summary ?? null,
      request.reason ?? null,
      request.caller_id,
      request.transition,
      request.session_id ?? null,
      event.id,
      event.subject,
      event.type,
      JSON.stringify(event.payload),
      currentTraceParent(),
    ],
  });
  const changed = rows[0];
  if (!changed) {
    const { rows: latest } = await pool.query<TaskRow>({ name: 'tasks-load-task', text: LOAD_TASK_SQL, values: [taskId] });
    throw new RelayError('state_changed', `Another caller changed the task from ${current.state} to ${latest[0]?.state ?? 'gone'} first`, {
      expected_state: current.state,
      state: latest[0]?.state ?? null,
    });
  }
  const { artifacts, unread, ...task } = changed;
  return { task, artifacts, unread };
}
