import { createHash } from 'node:crypto';
import { TASK_LIMITS, type ListRequest } from '@app/contracts';
import { decodeCursor } from './list-cursor';
import { TASK_COLUMNS } from './task-rows';
import { unreadCountSql } from './sql/unread-count.sql';

/** The page query of `tasks/list` and what goes with it: the one text the tasks service runs (and the bench explains). */
export interface ListQuery {
  order: 'created' | 'status';
  limit: number;
  /**
   * The prepared statement's name, one per text: the filters a request uses give a bounded number of
   * texts, and a prepared statement is parsed once per connection and its plan kept.
   */
  name: string;
  /** The page: one row more than `limit` (a parameter), so that a next page is known without a count. */
  text: string;
  values: unknown[];
  /** The filter without the cursor, with its values: what `include_total` counts. */
  filter: { clauses: string[]; values: unknown[] };
}

/** The SQL of a page of the caller's tasks, newest first (by id or by status time), with the caller's unread count per task. */
export function listQuery(request: ListRequest): ListQuery {
  const order = request.order ?? 'created';
  const limit = request.limit ?? TASK_LIMITS.listDefaultLimit;
  const values: unknown[] = [request.caller_id];
  const where: string[] = [];
  const role = request.role ?? 'recipient';
  // One role: the caller's column as a range of one value, and the order led by that column. Postgres
  // drops an ORDER BY column that an equality pins, and then may walk the primary key and filter (its
  // guess for an agent with a large share of the table), reading every newer task of the others first;
  // with the range, only the role's own index gives the order, so a page reads its own rows.
  const own = role === 'recipient' ? 't."recipient_id"' : role === 'sender' ? 't."sender_id"' : undefined;
  if (own) where.push(`${own} >= $1 AND ${own} <= $1`);
  // A task held for approval (or never delivered) does not exist for its recipient.
  if (role === 'recipient') where.push(`NOT t."hidden_from_recipient"`);
  const add = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  if (request.states && request.states.length > 0) where.push(`t."state" = ANY(${add(request.states)}::text[])`);
  if (request.since) where.push(`(t."created_at" > ${add(request.since)}::timestamptz OR t."updated_at" > $${values.length}::timestamptz)`);
  if (request.status_timestamp_after) where.push(`t."status_timestamp" > ${add(request.status_timestamp_after)}::timestamptz`);
  if (request.counterpart_id) {
    const counterpart = add(request.counterpart_id);
    where.push(`((t."sender_id" = $1 AND t."recipient_id" = ${counterpart}) OR (t."recipient_id" = $1 AND t."sender_id" = ${counterpart}))`);
  }
  if (request.context_id) where.push(`t."context_id" = ${add(request.context_id)}`);
  const filtered = [...where];
  const filterValues = values.slice(0, countParams(filtered));
  if (request.cursor) {
    const cursor = decodeCursor(request.cursor, order);
    if (order === 'created') where.push(`t."id" < ${add(cursor.id)}`);
    else where.push(`(t."status_timestamp", t."id") < (${add(cursor.status_key)}::timestamptz, ${add(cursor.id)})`);
  }
  const newestFirst = order === 'created' ? `t."id" DESC` : `t."status_timestamp" DESC, t."id" DESC`;
  const limitParam = add(limit + 1);
  // Either role: each side read from its own index in order, as above, and the two merged (a task
  // the caller sent itself is the recipient side's), so a page never sorts all the caller's tasks.
  const side = (column: string, extra: string[] = []): string =>
    `(SELECT t.* FROM "tasks"."tasks" t WHERE ${[`${column} >= $1 AND ${column} <= $1`, ...extra, ...where].join(' AND ')}
        ORDER BY ${column}, ${newestFirst} LIMIT ${limitParam}::int)`;
  const from = own
    ? `"tasks"."tasks" t WHERE ${where.join(' AND ')} ORDER BY ${own}, ${newestFirst}`
    : `(${side('t."recipient_id"', ['NOT t."hidden_from_recipient"'])} UNION ALL ${side('t."sender_id"', ['t."recipient_id" <> $1'])}) t ORDER BY ${newestFirst}`;
  if (!own) filtered.unshift(`(t."sender_id" = $1 OR (t."recipient_id" = $1 AND NOT t."hidden_from_recipient"))`);
  const text = `SELECT ${TASK_COLUMNS},
         to_char(t."status_timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "status_key",
         ${unreadCountSql('t."id"', '$1')} AS "unread_messages"
       FROM ${from}
       LIMIT ${limitParam}::int`;
  const name = `tasks-list-${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
  return { order, limit, name, text, values, filter: { clauses: filtered, values: filterValues } };
}

/** How many of the list's parameters the filter clauses (without the cursor) use. */
function countParams(clauses: string[]): number {
  let highest = 1;
  for (const clause of clauses) for (const match of clause.matchAll(/\$(\d+)/g)) highest = Math.max(highest, Number(match[1]));
  return highest;
}
