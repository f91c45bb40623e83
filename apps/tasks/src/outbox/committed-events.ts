import { OUTBOX_PUBLISHED, OUTBOX_TABLE } from './outbox.constants';

/** An outbox row as it is published: what its writer committed, with the position it was given. */
export interface OutboxRow {
  id: string;
  position: string;
  task_id: string;
  subject: string;
  payload: unknown;
  trace_parent: string | null;
}

/**
 * Publishes the events a transaction committed, right after the commit, in the process that
 * committed them. Rows come oldest first; a task's rows go out one at a time, each once the
 * previous one is acknowledged. Nothing is awaited: what is not published now, the outbox relay's
 * sweep publishes later (docs/decisions/0036-publish-after-commit-outbox-as-safety-net.md).
 */
export interface CommittedEvents {
  publishCommitted(rows: OutboxRow[]): void;
}

export const COMMITTED_EVENTS = Symbol('COMMITTED_EVENTS');

/**
 * The events of task `taskId` (an SQL expression) not marked published, oldest first, as a JSON
 * array of outbox rows: a scalar subquery of a writing statement, which does not see the rows the
 * statement itself inserts, so it answers the events committed before it. A writer publishes them
 * before its own, so that none of its events can reach the stream ahead of an earlier one of its
 * task that another process committed and has not published yet (or failed to). The writing
 * statement must see every earlier commit of the task: a change is conditional on the version it
 * read, so a change that went through read the task after those commits.
 */
export function earlierUnpublishedSql(taskId: string): string {
  // In position order from outbox_events_task_unpublished_idx: the task's unpublished rows only.
  return `(SELECT COALESCE(json_agg(json_build_object('id', e."id", 'position', e."position"::text, 'task_id', e."task_id", 'subject', e."subject",
    'payload', e."payload", 'trace_parent', e."trace_parent") ORDER BY e."position"), '[]'::json)
  FROM (SELECT * FROM ${OUTBOX_TABLE} u WHERE u."task_id" = ${taskId} AND NOT (u.${OUTBOX_PUBLISHED}) ORDER BY u."task_id", u."position") e)`;
}

/** The positions the statement's `outbox` part gave its rows, as a JSON object keyed by event id. */
export const OWN_POSITIONS_SQL = `(SELECT COALESCE(json_object_agg(o."id", o."position"::text), '{}'::json) FROM outbox o)`;

/**
 * The rows a writing statement committed, oldest first: the earlier unpublished ones of the task
 * it answered (`earlier`), then its own events with the positions it gave them.
 */
export function committedRows(
  taskId: string,
  earlier: OutboxRow[],
  own: Array<{ id: string; subject: string; payload: unknown }>,
  positions: Record<string, string>,
  traceParent: string | null,
): OutboxRow[] {
  return [
    ...earlier,
    ...own.map((event) => ({
      id: event.id,
      position: positions[event.id],
      task_id: taskId,
      subject: event.subject,
      payload: event.payload,
      trace_parent: traceParent,
    })),
  ];
}
