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
import { encodeCursor } from '../store/list-cursor';
import { listQuery } from '../store/list-query';
import { readInboxEvents, readTaskEvents } from '../store/task-event-replay';
import { readTask } from '../store/read-query';
import { toMessageView, toTaskView, type ArtifactRow, type MessageRow, type TaskRow } from '../store/task-rows';
import { pgPoolOf } from '@app/database';

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
    const { order, limit, name, text, values, filter } = listQuery(request);
    const { rows } = await this.pool.query<TaskRow>({ name, text, values });
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
        `SELECT count(*)::int AS "total" FROM "tasks"."tasks" t WHERE ${filter.clauses.join(' AND ')}`,
        filter.values,
      );
      reply.total_size = total;
    }
    return reply;
  }
}
