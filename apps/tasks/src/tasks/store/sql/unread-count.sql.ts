/**
 * How many of a task's messages the caller has not read: those the other party wrote after the
 * caller's read cursor. `count(*)`, a bigint (cast it where the caller wants an int). `taskId` and
 * `callerId` are SQL expressions (a column, a placeholder) and may be written twice.
 */
export function unreadCountSql(taskId: string, callerId: string): string {
  return `(SELECT count(*) FROM "tasks"."messages" m
    WHERE m."task_id" = ${taskId} AND m."author_id" <> ${callerId}
      AND m."sequence_no" > COALESCE((SELECT r."last_read_sequence_no" FROM "tasks"."read_cursors" r
                                      WHERE r."task_id" = ${taskId} AND r."participant_id" = ${callerId}), 0))`;
}
