import type pg from 'pg';
import {
  RelayError,
  TASK_EVENTS_PAGE_LIMIT,
  TASK_LIMITS,
  type InboxEventsReply,
  type InboxEventsRequest,
  type PositionedTaskEvent,
  type TaskEvent,
  type TaskEventsReply,
  type TaskEventsRequest,
} from '@app/contracts';
import { OUTBOX_DELETED_THROUGH_SQL, OUTBOX_HORIZON_SQL } from '../../retention/retention-sql';
import { partyOf } from '../rules/state-machine';
import { readTask } from './read-query';
import { toTaskView } from './task-rows';

/** Push-config events share the outbox and a task id, but are not part of a task's history. */
const TASK_EVENTS_ONLY = `"type" NOT IN ('push_config_set', 'push_config_deleted')`;

const PARTIES_SQL = `SELECT "id", "sender_id", "recipient_id", "hidden_from_recipient" FROM "tasks"."tasks" WHERE "id" = $1`;
const KNOWN_POSITION_SQL = `SELECT 1 FROM "tasks"."outbox_events" WHERE "task_id" = $1 AND "position" = $2::bigint AND ${TASK_EVENTS_ONLY}`;
/** What an event adds to its payload's bytes in a reply (`{"position": …, "event": …}`). */
const EVENT_OVERHEAD_BYTES = 64;

/**
 * The first events (at most `$limit`) that `candidates` selects (`position`, `payload` of outbox rows,
 * in position order), cut where their bytes pass `$budget`: the first one always comes back, flagged
 * by `fits` whether it is within the budget, so that a caller that must not exceed it can leave it out.
 * `candidates` is how many events the cut page had to choose from.
 */
function eventsWithinBudgetSql(candidates: string, limit: string, budget: string): string {
  return `SELECT w."position"::text AS "position", w."payload", w."running" <= ${budget} AS "fits", w."candidates"::int AS "candidates" FROM (
    SELECT e."position", e."payload",
      sum(octet_length(e."payload"::text) + ${EVENT_OVERHEAD_BYTES}) OVER (ORDER BY e."position") AS "running",
      row_number() OVER (ORDER BY e."position") AS "rank",
      count(*) OVER () AS "candidates"
    FROM (${candidates} ORDER BY "position" LIMIT ${limit}) e
  ) w WHERE w."rank" = 1 OR w."running" <= ${budget} ORDER BY w."position"`;
}

const EVENTS_AFTER_SQL = eventsWithinBudgetSql(
  `SELECT "position", "payload" FROM "tasks"."outbox_events" WHERE "task_id" = $1 AND "position" > $2::bigint AND ${TASK_EVENTS_ONLY}`,
  '$3',
  '$4',
);

interface BudgetedEventRow {
  position: string;
  payload: TaskEvent;
  fits: boolean;
  candidates: number;
}

/**
 * A page of events from rows cut by `eventsWithinBudgetSql`: `has_more` while the page left events
 * out, and no event at all when even the first would pass the budget and `mayExceed` is false (the
 * next page, with more room, carries it).
 */
function eventPage(rows: BudgetedEventRow[], mayExceed: boolean): { events: PositionedTaskEvent[]; has_more: boolean } {
  if (rows.length === 0) return { events: [], has_more: false };
  if (!rows[0].fits && !mayExceed) return { events: [], has_more: true };
  const events = rows.map((row) => ({ position: row.position, event: row.payload }));
  return { events, has_more: events.length < rows[0].candidates };
}
const NEWEST_POSITION_SQL = `SELECT COALESCE(max("position"), 0)::text AS "position" FROM "tasks"."outbox_events" WHERE "task_id" = $1 AND ${TASK_EVENTS_ONLY}`;

const POSITION = /^[0-9]{1,19}$/;

/** The highest outbox position the retention deleted (docs/events.md#retention): a stream resumes only after it. */
async function outboxHorizon(client: pg.PoolClient): Promise<string> {
  const { rows } = await client.query<{ position: string }>({ name: 'tasks-outbox-horizon', text: OUTBOX_HORIZON_SQL });
  return rows[0]?.position ?? '0';
}

/**
 * A `Last-Event-ID` older than the events the outbox keeps: the events after it may be gone. The data
 * names the oldest position a stream may still resume after (the edge shows it as a stream id).
 */
function eventsExpired(after: string, horizon: string, then: string): RelayError {
  return new RelayError('events_expired', `Last-Event-ID is older than the events this relay keeps (RELAY_OUTBOX_RETENTION_DAYS); ${then}`, {
    field: 'Last-Event-ID',
    oldest_position: horizon,
  });
}

/** Runs `read` in one REPEATABLE READ snapshot on one connection, so that everything it reads agrees. */
async function inSnapshot<T>(pool: pg.Pool, read: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    try {
      return await read(client);
    } finally {
      await client.query('COMMIT');
    }
  } finally {
    client.release();
  }
}

/**
 * A task's events after a position, for one of its participants, read from the outbox (which keeps
 * every event for its window, docs/events.md#retention), with the task itself as of the newest event
 * when asked. Everything is read in one REPEATABLE READ snapshot, so the task and the position agree.
 */
export async function readTaskEvents(pool: pg.Pool, request: TaskEventsRequest): Promise<TaskEventsReply> {
  const taskId = request.task_id.toUpperCase();
  const after = request.after_position;
  if (after !== undefined && !POSITION.test(after)) {
    throw new RelayError('invalid_params', 'Last-Event-ID is not an event id of this relay', { field: 'Last-Event-ID' });
  }
  return inSnapshot(pool, (client) => readInSnapshot(client, request, taskId, after));
}

async function readInSnapshot(client: pg.PoolClient, request: TaskEventsRequest, taskId: string, after: string | undefined): Promise<TaskEventsReply> {
  let task: TaskEventsReply['task'];
  if (request.snapshot) {
    const read = await readTask(client as unknown as pg.Pool, {
      caller_id: request.caller_id,
      task_id: taskId,
      history_length: request.history_length,
      mark_read: false,
      ...(request.counterpart_id !== undefined ? { counterpart_id: request.counterpart_id } : {}),
    });
    task = toTaskView(read.task, read.messages, read.artifacts, read.unread);
  } else {
    const { rows } = await client.query<{ id: string; sender_id: string; recipient_id: string; hidden_from_recipient: boolean }>({
      name: 'tasks-event-parties',
      text: PARTIES_SQL,
      values: [taskId],
    });
    if (!rows[0]) throw new RelayError('thread_not_found', `No task with id ${request.task_id}`, { task_id: request.task_id });
    partyOf(rows[0], request.caller_id, request.counterpart_id);
  }
  const { rows: newest } = await client.query<{ position: string }>({ name: 'tasks-event-newest', text: NEWEST_POSITION_SQL, values: [taskId] });
  const position = newest[0].position;
  if (after === undefined) return { events: [], has_more: false, position, ...(task ? { task } : {}) };
  const horizon = await outboxHorizon(client);
  if (BigInt(after) < BigInt(horizon)) throw eventsExpired(after, horizon, 'read the task again and subscribe without it');
  // The horizon itself is where an expired stream may resume (its event is gone, every later one is kept).
  const { rows: known } =
    after === horizon ? { rows: [{}] } : await client.query({ name: 'tasks-event-known', text: KNOWN_POSITION_SQL, values: [taskId, after] });
  if (known.length === 0) {
    throw new RelayError(
      'invalid_params',
      `Last-Event-ID is not an event of task ${taskId}; subscribe again without it to start from the task's current state`,
      {
        field: 'Last-Event-ID',
      },
    );
  }
  // The task read with the events shares the reply's budget; when they do not fit together, the events come on the next page.
  const budget = TASK_LIMITS.replyEventBytes - (task ? Buffer.byteLength(JSON.stringify(task)) : 0);
  const { rows } = await client.query<BudgetedEventRow>({
    name: 'tasks-events-after',
    text: EVENTS_AFTER_SQL,
    values: [taskId, after, TASK_EVENTS_PAGE_LIMIT + 1, budget],
  });
  return { ...eventPage(rows.slice(0, TASK_EVENTS_PAGE_LIMIT), !task), position, ...(task ? { task } : {}) };
}

/**
 * The agent's events after a position: its events as sender and as recipient, each read in position
 * order from its own index (outbox_events_sender_position_idx, outbox_events_recipient_position_idx)
 * and cut at the page, then merged. An OR of the two would let the planner walk the whole outbox in
 * position order for an agent with few events. A task between an agent and itself comes once, from
 * the sender side. The recipient side leaves out events meant for the sender alone (`audience`: a
 * task held for approval and never delivered).
 */
export const INBOX_EVENTS_AFTER_SQL = eventsWithinBudgetSql(
  `SELECT "position", "payload" FROM (
     (SELECT "position", "payload" FROM "tasks"."outbox_events"
      WHERE "payload"->>'sender' = $2 AND "position" > $1::bigint AND ${TASK_EVENTS_ONLY} ORDER BY "position" LIMIT $3)
     UNION ALL
     (SELECT "position", "payload" FROM "tasks"."outbox_events"
      WHERE "payload"->>'recipient' = $2 AND "position" > $1::bigint AND ${TASK_EVENTS_ONLY} AND "payload"->>'sender' <> $2
        AND "payload"->>'audience' IS NULL ORDER BY "position" LIMIT $3)
   ) "own"`,
  '$3',
  '$4',
);
/** The newest position the outbox has held: its newest kept event, or the horizon when retention deleted them all. */
const NEWEST_OUTBOX_POSITION_SQL = `SELECT GREATEST((SELECT max("position") FROM "tasks"."outbox_events"), (${OUTBOX_DELETED_THROUGH_SQL}), 0)::text AS "position"`;
/**
 * Where a live inbox starts: the position of the agent's newest event, or the retention horizon
 * when that is later (an agent whose events are all deleted, or that never had one), so that the
 * ready id resumes until retention passes it. Opaque to the agent (stream ids are sealed).
 */
const NEWEST_INBOX_POSITION_SQL = `SELECT GREATEST(
     (SELECT max("position") FROM "tasks"."outbox_events" WHERE "payload"->>'sender' = $1 AND ${TASK_EVENTS_ONLY}),
     (SELECT max("position") FROM "tasks"."outbox_events" WHERE "payload"->>'recipient' = $1 AND ${TASK_EVENTS_ONLY}),
     (${OUTBOX_DELETED_THROUGH_SQL}),
     0)::text AS "position"`;

/**
 * The events of every task an agent (by handle) takes part in, after an outbox position, oldest
 * first; without a position only the position of the agent's newest event, where a live inbox starts.
 */
export async function readInboxEvents(pool: pg.Pool, request: InboxEventsRequest): Promise<InboxEventsReply> {
  const after = request.after_position;
  if (after !== undefined && !POSITION.test(after)) {
    throw new RelayError('invalid_params', 'Last-Event-ID is not an event id of this relay', { field: 'Last-Event-ID' });
  }
  if (after === undefined) {
    const { rows: own } = await pool.query<{ position: string }>({
      name: 'tasks-inbox-newest',
      text: NEWEST_INBOX_POSITION_SQL,
      values: [request.caller_handle],
    });
    return { events: [], has_more: false, position: own[0].position };
  }
  return inSnapshot(pool, async (client) => {
    const { rows: newest } = await client.query<{ position: string }>({ name: 'tasks-outbox-newest', text: NEWEST_OUTBOX_POSITION_SQL });
    const position = newest[0].position;
    if (BigInt(after) > BigInt(position)) {
      throw new RelayError('invalid_params', 'Last-Event-ID is not an event of this relay; watch again without it', { field: 'Last-Event-ID' });
    }
    const horizon = await outboxHorizon(client);
    if (BigInt(after) < BigInt(horizon)) throw eventsExpired(after, horizon, 'read your tasks again and watch without it');
    const { rows } = await client.query<BudgetedEventRow>({
      name: 'tasks-inbox-events-after',
      text: INBOX_EVENTS_AFTER_SQL,
      values: [after, request.caller_handle, TASK_EVENTS_PAGE_LIMIT + 1, TASK_LIMITS.replyEventBytes],
    });
    return { ...eventPage(rows.slice(0, TASK_EVENTS_PAGE_LIMIT), true), position };
  });
}
