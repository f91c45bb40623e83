import type pg from 'pg';
import {
  RelayError,
  TASK_EVENTS_PAGE_LIMIT,
  type InboxEventsReply,
  type InboxEventsRequest,
  type PositionedTaskEvent,
  type TaskEvent,
  type TaskEventsReply,
  type TaskEventsRequest,
} from '@app/contracts';
import { readTask } from './task-read';
import { toTaskView } from './task-rows';

/** Push-config events share the outbox and a task id, but are not part of a task's history. */
const TASK_EVENTS_ONLY = `"type" NOT IN ('push_config_set', 'push_config_deleted')`;

const PARTICIPANT_SQL = `SELECT ("sender_id" = $2 OR "recipient_id" = $2) AS "participant" FROM "tasks"."tasks" WHERE "id" = $1`;
const KNOWN_POSITION_SQL = `SELECT 1 FROM "tasks"."outbox_events" WHERE "task_id" = $1 AND "position" = $2::bigint AND ${TASK_EVENTS_ONLY}`;
const EVENTS_AFTER_SQL = `
SELECT "position"::text AS "position", "payload" FROM "tasks"."outbox_events"
WHERE "task_id" = $1 AND "position" > $2::bigint AND ${TASK_EVENTS_ONLY}
ORDER BY "outbox_events"."position" LIMIT $3`;
const NEWEST_POSITION_SQL = `SELECT COALESCE(max("position"), 0)::text AS "position" FROM "tasks"."outbox_events" WHERE "task_id" = $1 AND ${TASK_EVENTS_ONLY}`;

const POSITION = /^[0-9]{1,19}$/;

/**
 * A task's events after a position, for one of its participants, read from the outbox (which keeps
 * every event, docs/events.md#positions-and-stream-ids), with the task itself as of the newest event
 * when asked. Everything is read in one REPEATABLE READ snapshot, so the task and the position agree.
 */
export async function readTaskEvents(pool: pg.Pool, request: TaskEventsRequest): Promise<TaskEventsReply> {
  const taskId = request.task_id.toUpperCase();
  const after = request.after_position;
  if (after !== undefined && !POSITION.test(after)) {
    throw new RelayError('invalid_params', `Last-Event-ID '${after}' is not an event id of this relay`, { field: 'Last-Event-ID' });
  }
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    let reply: TaskEventsReply;
    try {
      reply = await readInSnapshot(client, request, taskId, after);
    } finally {
      await client.query('COMMIT');
    }
    return reply;
  } finally {
    client.release();
  }
}

async function readInSnapshot(client: pg.PoolClient, request: TaskEventsRequest, taskId: string, after: string | undefined): Promise<TaskEventsReply> {
  let task: TaskEventsReply['task'];
  if (request.snapshot) {
    const read = await readTask(client as unknown as pg.Pool, {
      caller_id: request.caller_id,
      task_id: taskId,
      history_length: request.history_length,
      mark_read: false,
    });
    task = toTaskView(read.task, read.messages, read.artifacts, read.unread);
  } else {
    const { rows } = await client.query<{ participant: boolean }>({
      name: 'tasks-event-participant',
      text: PARTICIPANT_SQL,
      values: [taskId, request.caller_id],
    });
    if (!rows[0]) throw new RelayError('thread_not_found', `No thread with id ${request.task_id}`, { task_id: request.task_id });
    if (!rows[0].participant) throw new RelayError('not_a_participant', 'You are not a participant of this thread', { task_id: taskId });
  }
  const { rows: newest } = await client.query<{ position: string }>({ name: 'tasks-event-newest', text: NEWEST_POSITION_SQL, values: [taskId] });
  const position = newest[0].position;
  if (after === undefined) return { events: [], has_more: false, position, ...(task ? { task } : {}) };
  const { rows: known } = await client.query({ name: 'tasks-event-known', text: KNOWN_POSITION_SQL, values: [taskId, after] });
  if (known.length === 0) {
    throw new RelayError(
      'invalid_params',
      `Last-Event-ID '${after}' is not an event of task ${taskId}; subscribe again without it to start from the task's current state`,
      {
        field: 'Last-Event-ID',
      },
    );
  }
  const { rows } = await client.query<{ position: string; payload: TaskEvent }>({
    name: 'tasks-events-after',
    text: EVENTS_AFTER_SQL,
    values: [taskId, after, TASK_EVENTS_PAGE_LIMIT + 1],
  });
  const events: PositionedTaskEvent[] = rows.slice(0, TASK_EVENTS_PAGE_LIMIT).map((row) => ({ position: row.position, event: row.payload }));
  return { events, has_more: rows.length > TASK_EVENTS_PAGE_LIMIT, position, ...(task ? { task } : {}) };
}

const INBOX_EVENTS_AFTER_SQL = `
SELECT "position"::text AS "position", "payload" FROM "tasks"."outbox_events"
WHERE "position" > $1::bigint AND ${TASK_EVENTS_ONLY} AND ("payload"->>'sender' = $2 OR "payload"->>'recipient' = $2)
ORDER BY "outbox_events"."position" LIMIT $3`;
const NEWEST_OUTBOX_POSITION_SQL = `SELECT COALESCE(max("position"), 0)::text AS "position" FROM "tasks"."outbox_events"`;

/**
 * The events of every task an agent (by handle) takes part in, after an outbox position, oldest
 * first; without a position only the newest one, where a live inbox starts.
 */
export async function readInboxEvents(pool: pg.Pool, request: InboxEventsRequest): Promise<InboxEventsReply> {
  const after = request.after_position;
  if (after !== undefined && !POSITION.test(after)) {
    throw new RelayError('invalid_params', `Last-Event-ID '${after}' is not an event id of this relay`, { field: 'Last-Event-ID' });
  }
  const { rows: newest } = await pool.query<{ position: string }>({ name: 'tasks-outbox-newest', text: NEWEST_OUTBOX_POSITION_SQL });
  const position = newest[0].position;
  if (after === undefined) return { events: [], has_more: false, position };
  if (BigInt(after) > BigInt(position)) {
    throw new RelayError('invalid_params', `Last-Event-ID '${after}' is not an event of this relay; watch again without it`, { field: 'Last-Event-ID' });
  }
  const { rows } = await pool.query<{ position: string; payload: TaskEvent }>({
    name: 'tasks-inbox-events-after',
    text: INBOX_EVENTS_AFTER_SQL,
    values: [after, request.caller_handle, TASK_EVENTS_PAGE_LIMIT + 1],
  });
  const events: PositionedTaskEvent[] = rows.slice(0, TASK_EVENTS_PAGE_LIMIT).map((row) => ({ position: row.position, event: row.payload }));
  return { events, has_more: rows.length > TASK_EVENTS_PAGE_LIMIT, position };
}
