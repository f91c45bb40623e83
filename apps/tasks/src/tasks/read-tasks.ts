import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import {
  TASK_LIMITS,
  type GetRequest,
  type InboxEventsReply,
  type InboxEventsRequest,
  type ListReply,
  type ListRequest,
  type TaskEventsReply,
  type TaskEventsRequest,
  type TaskView,
} from '@app/contracts';
import { decodeCursor, encodeCursor } from './list-cursor';
import { readInboxEvents, readTaskEvents } from './task-event-replay';
import { readTask } from './task-read';
import { pgPoolOf } from './task-repository';
import { TASK_COLUMNS, toMessageView, toTaskView, type ArtifactRow, type MessageRow, type TaskRow } from './task-rows';

/** The newest messages of the listed tasks (`$1`, in list order), at most `$2` per task, while their stored bytes fit `$3` (in list order). */
const LIST_MESSAGES_SQL = `
SELECT w.* FROM (
  SELECT m.*, sum(m."size_bytes" + 256) OVER (ORDER BY o."ord", m."sequence_no" DESC) AS "running"
  FROM unnest($1::text[]) WITH ORDINALITY AS o("id", "ord")
  JOIN "tasks"."tasks" t ON t."id" = o."id"
  JOIN "tasks"."messages" m ON m."task_id" = o."id" AND m."sequence_no" > t."message_count" - $2
) w WHERE w."running" <= $3 ORDER BY w."task_id", w."sequence_no"`;

/** The artifacts of the listed tasks (`$1`, in list order) while they fit `$2`; the first task's always (a task holds at most TASK_LIMITS.artifactBytesPerTask). */
const LIST_ARTIFACTS_SQL = `
SELECT w.* FROM (
  SELECT a.*, o."ord", sum(octet_length(a::text)) OVER (ORDER BY o."ord", a."position") AS "running"
  FROM unnest($1::text[]) WITH ORDINALITY AS o("id", "ord")
  JOIN "tasks"."artifacts" a ON a."task_id" = o."id"
) w WHERE w."ord" = 1 OR w."running" <= $2 ORDER BY w."task_id", w."position"`;

/** The newest of `messages` (oldest first) whose JSON fits `budget` bytes, in their order, and their bytes. */
function newestWithin<T>(messages: T[], budget: number): { messages: T[]; bytes: number; length: number } {
  let bytes = 0;
  let first = messages.length;
  while (first > 0) {
    const size = Buffer.byteLength(JSON.stringify(messages[first - 1]));
    if (bytes + size > budget) break;
    bytes += size;
    first -= 1;
  }
  const kept = messages.slice(first);
  return { messages: kept, bytes, length: kept.length };
}

/** The read side: one task with its history, pages of a caller's tasks, and the event log of streams. */
@Injectable()
export class ReadTasks {
  /** The pg pool behind TypeORM: a read is one statement on it. */
  private readonly pool: pg.Pool;

  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {
    this.pool = pgPoolOf(dataSource);
  }

  /** A task's events after a position (a stream's replay), with the task itself when asked, in one snapshot. */
  events(request: TaskEventsRequest): Promise<TaskEventsReply> {
    return readTaskEvents(this.pool, request);
  }

  /** The events of every task the caller takes part in after a position (the live inbox's replay). */
  inboxEvents(request: InboxEventsRequest): Promise<InboxEventsReply> {
    return readInboxEvents(this.pool, request);
  }

  async get(request: GetRequest): Promise<TaskView> {
    const read = await readTask(this.pool, request);
    return toTaskView(read.task, read.messages, read.artifacts, read.unread);
  }

  async list(request: ListRequest): Promise<ListReply> {
    const order = request.order ?? 'created';
    const limit = request.limit ?? TASK_LIMITS.listDefaultLimit;
    const params: unknown[] = [request.caller_id];
    const where: string[] = [];
    const role = request.role ?? 'recipient';
    where.push(role === 'recipient' ? `t."recipient_id" = $1` : role === 'sender' ? `t."sender_id" = $1` : `(t."sender_id" = $1 OR t."recipient_id" = $1)`);
    const add = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    if (request.states && request.states.length > 0) where.push(`t."state" = ANY(${add(request.states)}::text[])`);
    if (request.since) where.push(`(t."created_at" > ${add(request.since)}::timestamptz OR t."updated_at" > $${params.length}::timestamptz)`);
    if (request.status_timestamp_after) where.push(`t."status_timestamp" > ${add(request.status_timestamp_after)}::timestamptz`);
    if (request.counterpart_id) {
      const counterpart = add(request.counterpart_id);
      where.push(`((t."sender_id" = $1 AND t."recipient_id" = ${counterpart}) OR (t."recipient_id" = $1 AND t."sender_id" = ${counterpart}))`);
    }
    if (request.context_id) where.push(`t."context_id" = ${add(request.context_id)}`);
    const filtered = [...where];
    if (request.cursor) {
      const cursor = decodeCursor(request.cursor, order);
      if (order === 'created') where.push(`t."id" < ${add(cursor.id)}`);
      else where.push(`(t."status_timestamp", t."id") < (${add(cursor.status_key)}::timestamptz, ${add(cursor.id)})`);
    }
    const orderBy = order === 'created' ? `t."id" DESC` : `t."status_timestamp" DESC, t."id" DESC`;
    const rows: TaskRow[] = await this.dataSource.query(
      `SELECT ${TASK_COLUMNS},
         to_char(t."status_timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "status_key",
         (SELECT count(*) FROM "tasks"."messages" m
           WHERE m."task_id" = t."id" AND m."author_id" <> $1
             AND m."sequence_no" > COALESCE((SELECT r."last_read_sequence_no" FROM "tasks"."read_cursors" r
                                             WHERE r."task_id" = t."id" AND r."participant_id" = $1), 0)) AS "unread_messages"
       FROM "tasks"."tasks" t
       WHERE ${where.join(' AND ')}
       ORDER BY ${orderBy}
       LIMIT ${limit + 1}`,
      params,
    );
    const candidates = rows.slice(0, limit);
    const ids = candidates.map((row) => row.id);
    const historyLength = request.history_length ?? 0;
    // What is loaded is bounded too, in list order: the newest messages of each task, and the artifacts, while they fit one reply.
    const messages: MessageRow[] =
      historyLength > 0 && ids.length > 0 ? await this.dataSource.query(LIST_MESSAGES_SQL, [ids, historyLength, TASK_LIMITS.replyListBytes]) : [];
    const artifacts: ArtifactRow[] =
      ids.length > 0 && request.include_artifacts !== false ? await this.dataSource.query(LIST_ARTIFACTS_SQL, [ids, TASK_LIMITS.replyListBytes]) : [];
    // Items are added while they fit one reply, each with its whole history asked for; the cursor goes on after the last one added.
    // The first item always comes back, with the newest of its messages that fit.
    const items: TaskView[] = [];
    let bytes = 0;
    for (const row of candidates) {
      const item = toTaskView(
        row,
        [],
        artifacts.filter((artifact) => artifact.task_id === row.id),
        Number(row.unread_messages ?? 0),
      );
      if (request.summary_max_chars !== undefined) item.summary = item.summary.slice(0, request.summary_max_chars);
      const history = messages.filter((message) => message.task_id === row.id).map(toMessageView);
      const wanted = Math.min(historyLength, row.message_count);
      const itemBytes = Buffer.byteLength(JSON.stringify(item));
      const kept = newestWithin(history, TASK_LIMITS.replyListBytes - bytes - itemBytes);
      if (items.length > 0 && (kept.length < wanted || bytes + itemBytes + kept.bytes > TASK_LIMITS.replyListBytes)) break;
      item.messages = kept.messages;
      bytes += itemBytes + kept.bytes;
      items.push(item);
    }
    const last = candidates[items.length - 1];
    const more = items.length < candidates.length || rows.length > limit;
    const reply: ListReply = { items, next_cursor: more && last ? encodeCursor({ order, id: last.id, status_key: last.status_key }) : null };
    if (request.include_total) {
      const [{ total }] = await this.dataSource.query(
        `SELECT count(*)::int AS "total" FROM "tasks"."tasks" t WHERE ${filtered.join(' AND ')}`,
        params.slice(0, countParams(filtered)),
      );
      reply.total_size = total;
    }
    return reply;
  }
}

/** How many of the list's parameters the filter clauses (without the cursor) use. */
function countParams(clauses: string[]): number {
  let highest = 1;
  for (const clause of clauses) for (const match of clause.matchAll(/\$(\d+)/g)) highest = Math.max(highest, Number(match[1]));
  return highest;
}
