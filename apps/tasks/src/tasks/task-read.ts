import type pg from 'pg';
import { RelayError, TASK_LIMITS, type GetRequest } from '@app/contracts';
import { messageFromJson, messagesWithinBudgetSql, type JsonMessage } from './message-budget';
import { partyOf } from './state-machine';
import { TASK_COLUMNS, type ArtifactRow, type MessageRow, type TaskRow } from './task-rows';

/** A task as one participant reads it: the row, that participant's unread count, messages and artifacts. */
export interface TaskRead {
  task: TaskRow;
  unread: number;
  messages: MessageRow[];
  artifacts: ArtifactRow[];
}

/**
 * A participant's read of a task in one statement (one snapshot, one round trip): the task,
 * the caller's unread count as it was before this read, the requested messages within the reply's
 * byte budget (the oldest ones when paging with `after_sequence_no`, `$6`, the newest otherwise) and
 * the artifacts, and, unless `$5` is false, the caller's read cursor moved to the last message. A read with
 * nothing new to mark writes nothing (so a polling GetTask is a read-only transaction). An outsider gets
 * the task's row with a null party and marks nothing.
 */
/**
 * What a read's messages may take: the message budget less the task's own texts (its summary repeats
 * a first text part of up to 100,000 characters), so that the whole reply, with the task's artifacts
 * (at most TASK_LIMITS.artifactBytesPerTask), stays within one NATS message.
 */
const MESSAGE_BUDGET_SQL = `(${TASK_LIMITS.replyMessageBytes} - octet_length(t."summary") - octet_length(COALESCE(t."result_summary", '')) - octet_length(COALESCE(t."reason", ''))
  - octet_length(COALESCE(t."proposed_action"::text, '')) - octet_length(t."metadata"::text))`;

const READ_TASK_SQL = `
WITH t AS (
  SELECT ${TASK_COLUMNS},
    CASE WHEN t."sender_id" = $2 THEN 'sender' WHEN t."recipient_id" = $2 THEN 'recipient' END AS "party",
    ($7::text IS NULL OR CASE WHEN t."sender_id" = $2 THEN t."recipient_id" ELSE t."sender_id" END = $7::text) AS "on_endpoint"
  FROM "tasks"."tasks" t WHERE t."id" = $1
), mark AS (
  INSERT INTO "tasks"."read_cursors" ("task_id", "participant_id", "last_read_sequence_no", "updated_at")
  SELECT t."id", $2, t."message_count", now() FROM t WHERE t."party" IS NOT NULL AND t."on_endpoint" AND $5
  ON CONFLICT ("task_id", "participant_id") DO UPDATE
    SET "last_read_sequence_no" = EXCLUDED."last_read_sequence_no", "updated_at" = now()
    WHERE "read_cursors"."last_read_sequence_no" < EXCLUDED."last_read_sequence_no"
)
SELECT t.*,
  (SELECT count(*)::int FROM "tasks"."messages" m
    WHERE m."task_id" = t."id" AND m."author_id" <> $2
      AND m."sequence_no" > COALESCE((SELECT r."last_read_sequence_no" FROM "tasks"."read_cursors" r
                                      WHERE r."task_id" = t."id" AND r."participant_id" = $2), 0)) AS "unread",
  CASE WHEN $3::int = 0 THEN '[]'::json ELSE ${messagesWithinBudgetSql(
    't."id"',
    'GREATEST($4::int, CASE WHEN $3::int IS NULL THEN 0 ELSE t."message_count" - $3::int END)',
    '$6::boolean',
    MESSAGE_BUDGET_SQL,
  )} END AS "messages",
  (SELECT COALESCE(json_agg(a ORDER BY a."position"), '[]'::json) FROM "tasks"."artifacts" a WHERE a."task_id" = t."id") AS "artifacts"
FROM t`;

/**
 * The task for one of its participants (on an endpoint, `counterpart_id`: only between the caller
 * and that agent); `thread_not_found` or `not_a_participant` otherwise (nothing marked read).
 */
export async function readTask(pool: pg.Pool, request: GetRequest): Promise<TaskRead> {
  const { rows } = await pool.query<
    TaskRow & { party: string | null; on_endpoint: boolean; unread: number; messages: JsonMessage[]; artifacts: ArtifactRow[] }
  >({
    name: 'tasks-read-task',
    text: READ_TASK_SQL,
    values: [
      request.task_id.toUpperCase(),
      request.caller_id,
      request.history_length ?? null,
      request.after_sequence_no ?? 0,
      request.mark_read !== false,
      request.after_sequence_no !== undefined,
      request.counterpart_id ?? null,
    ],
  });
  const [row] = rows;
  if (!row) throw new RelayError('thread_not_found', `No task with id ${request.task_id}`, { task_id: request.task_id });
  partyOf(row, request.caller_id, request.counterpart_id);
  const { party: _party, on_endpoint: _onEndpoint, unread, messages, artifacts, ...task } = row;
  return {
    task,
    unread,
    messages: messages.map(messageFromJson),
    artifacts,
  };
}
