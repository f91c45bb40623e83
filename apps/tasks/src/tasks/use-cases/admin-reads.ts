import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import {
  ADMIN_TASK_LIMITS,
  OVERLOADED_RETRY_AFTER_SECONDS,
  RelayError,
  TASK_STATE_AFTER_EVENT,
  TASK_STATES,
  type AdminCountsReply,
  type AdminCountsRequest,
  type AdminEventsReply,
  type AdminEventsRequest,
  type AdminGetTaskRequest,
  type AdminListTasksRequest,
  type AdminOverviewReply,
  type AdminSearchPage,
  type AdminSearchTasksRequest,
  type AdminTaskDetail,
  type AdminTaskFilter,
  type AdminTaskPage,
  type AdminTaskRow,
  type AgentSearchReply,
  type AgentSearchTasksRequest,
  type HighlightFragment,
  type ListRole,
  type PositionedTaskEvent,
  type SearchHighlight,
  type TaskAuditRow,
  type TaskEvent,
  type TaskState,
  type TimelineEntry,
} from '@app/contracts';
import { ARTIFACT_SEARCH_TEXT, ARTIFACT_SEARCH_VECTOR } from '../../database/migrations/1764560000000-ConsoleReads';
import { MESSAGE_SEARCH_CHARS, MESSAGE_SEARCH_TEXT, MESSAGE_SEARCH_VECTOR } from '../../database/migrations/1764590000000-BoundedSearch';
import { readTask } from '../store/task-read';
import { OUTBOX_HORIZON_SQL } from '../../retention/retention-sql';
import { TASK_COLUMNS, toMessageView, toTaskView, type MessageRow, type TaskRow } from '../store/task-rows';
import { pgPoolOf } from '@app/database';

/** Push-config events share the outbox and a task id, but are not part of a task's history. */
const TASK_EVENTS_ONLY = `"type" NOT IN ('push_config_set', 'push_config_deleted')`;
const POSITION = /^[0-9]{1,19}$/;
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const MICROSECOND_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
/** The Postgres text of a `real` rank (ts_rank), as the search cursor carries it. */
const RANK_KEY = /^[0-9]+(\.[0-9]+)?(e-?[0-9]+)?$/;
const CREATED_KEY_SQL = `to_char(t."created_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
/** Where a highlight's matches start and stop: control characters, removed from the text first, so that no text is read as markup. */
const START_SEL = '\u0001';
const STOP_SEL = '\u0002';
/** Matches of each source (messages, artifacts) a search ranks at most (docs/admin-api.md#search). */
export const SEARCH_CANDIDATES = 10_000;
/** Matches of each source an agent's or a context's search reads from the index at most, to find those of its tasks. */
export const SEARCH_SCANNED = 100_000;
/** Characters of message text one search parses again to rank its matches (each counted up to MESSAGE_SEARCH_CHARS, plus RANKED_ROW_CHARS). */
export const SEARCH_RANKED_CHARS = 2_000_000;
const RANKED_ROW_CHARS = 256;
/** Characters of a matching message's text a highlight is made from. */
export const HEADLINE_CHARS = 10_000;
/** Searches one tasks process runs at once (each on one connection of the pool); more are refused as `overloaded`. */
export const SEARCH_CONCURRENCY = 2;
/** The longest one statement of a search runs (the pool's statement timeout instead, when that is shorter). */
export const SEARCH_STATEMENT_TIMEOUT_MS = 3000;
// One excerpt around the best match: Postgres's fragment mode (MaxFragments > 0) drops the punctuation that ends a fragment.
const HEADLINE_OPTIONS = `StartSel=${START_SEL}, StopSel=${STOP_SEL}, MaxWords=35, MinWords=15`;

type AdminRow = TaskRow & {
  created_key: string;
  artifact_count: number | string;
  unread_messages?: number | string;
  rank?: number;
  rank_key?: string;
  last_event_position?: string | null;
};

function invalidCursor(field = 'cursor'): RelayError {
  return new RelayError('invalid_params', `${field} is not a cursor this list returned`, { field });
}

function encode(parts: string[]): string {
  return Buffer.from(JSON.stringify(parts), 'utf8').toString('base64url');
}

function decode(value: string, tag: string, field: string): string[] {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    if (Array.isArray(decoded) && decoded[0] === tag && decoded.every((part) => typeof part === 'string')) return decoded.slice(1) as string[];
  } catch {
    // fall through
  }
  throw invalidCursor(field);
}

/** Builds a statement's parameters as `$n` placeholders. */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

export function toAdminRow(row: AdminRow): AdminTaskRow {
  return {
    id: row.id,
    context_id: row.context_id,
    state: row.state,
    intent: row.intent,
    summary: row.summary.length > ADMIN_TASK_LIMITS.rowSummaryChars ? `${row.summary.slice(0, ADMIN_TASK_LIMITS.rowSummaryChars - 1)}…` : row.summary,
    sender: { handle: row.sender_handle, name: row.sender_name },
    recipient: { handle: row.recipient_handle, name: row.recipient_name },
    message_count: row.message_count,
    artifact_count: Number(row.artifact_count),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    status_timestamp: row.status_timestamp.toISOString(),
    ...(row.hold ? { hold: { rule: row.hold.rule, expires_at: row.hold.expires_at, four_eyes: row.hold.four_eyes, outcome: row.hold.outcome } } : {}),
    ...(row.last_event_position !== undefined ? { last_event_position: row.last_event_position } : {}),
  };
}

/** The filter clauses every branch of a list or search shares (not the agent and states, which split branches). */
function commonClauses(filter: AdminTaskFilter, params: Params): string[] {
  const clauses: string[] = [];
  if (filter.intents && filter.intents.length > 0) clauses.push(`t."intent" = ANY(${params.add(filter.intents)}::text[])`);
  if (filter.context_id !== undefined) clauses.push(`t."context_id" = ${params.add(filter.context_id)}`);
  if (filter.created_after !== undefined) clauses.push(`t."created_at" > ${params.add(filter.created_after)}::timestamptz`);
  if (filter.created_before !== undefined) clauses.push(`t."created_at" < ${params.add(filter.created_before)}::timestamptz`);
  return clauses;
}

/**
 * The participant clauses of an agent filter: one per side, so that each side reads its own index.
 * For an agent's own reads (`asAgent`), the recipient side leaves out what is hidden from it (held for approval).
 */
function agentSides(agentId: string | undefined, role: ListRole, params: Params, asAgent = false): string[] {
  if (agentId === undefined) return [];
  const agent = params.add(agentId);
  const hidden = asAgent ? ' AND NOT t."hidden_from_recipient"' : '';
  if (role === 'sender') return [`t."sender_id" = ${agent}`];
  if (role === 'recipient') return [`t."recipient_id" = ${agent}${hidden}`];
  return [`t."sender_id" = ${agent}`, `t."recipient_id" = ${agent} AND t."sender_id" <> ${agent}${hidden}`];
}

/**
 * The relay-wide reads of the admin API: tasks across all agents (keyset pages that each read an
 * index in order), one task with its timeline and audit, full-text search, the event log after a
 * position, per-agent counts and the overview. Every reply stays within one NATS message.
 */
@Injectable()
export class AdminReads {
  private readonly pool: pg.Pool;
  /** Searches running now (runSearch). */
  private searching = 0;

  constructor(@Inject(DataSource) dataSource: DataSource) {
    this.pool = pgPoolOf(dataSource);
  }

  /**
   * Newest first by (created_at, id). The filter is split into branches that each read one index
   * in order (per participant side; per state when no agent is named), each limited to the page,
   * and merged: a page costs about `limit` rows per branch however many tasks there are.
   */
  async list(request: AdminListTasksRequest): Promise<AdminTaskPage> {
    const limit = request.limit ?? ADMIN_TASK_LIMITS.listDefaultLimit;
    const params = new Params();
    const common = commonClauses(request, params);
    if (request.cursor !== undefined) {
      const [createdKey, id] = decode(request.cursor, 'a', 'cursor');
      if (!MICROSECOND_KEY.test(createdKey ?? '') || !ULID.test(id ?? '')) throw invalidCursor();
      common.push(`(t."created_at", t."id") < (${params.add(createdKey)}::timestamptz, ${params.add(id)})`);
    }
    const sides = agentSides(request.agent_id, request.role ?? 'either', params);
    const states = request.states && request.states.length > 0 ? [...new Set(request.states)] : undefined;
    let branches: string[][];
    if (sides.length > 0) {
      const stateClause = states ? [`t."state" = ANY(${params.add(states)}::text[])`] : [];
      branches = sides.map((side) => [side, ...stateClause]);
    } else if (states) {
      branches = states.map((state) => [`t."state" = ${params.add(state)}`]);
    } else {
      branches = [[]];
    }
    const select = (clauses: string[]): string =>
      `(SELECT ${TASK_COLUMNS}, ${CREATED_KEY_SQL} AS "created_key" FROM "tasks"."tasks" t
        ${clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : ''}
        ORDER BY t."created_at" DESC, t."id" DESC LIMIT ${limit + 1})`;
    const union = branches.map((branch) => select([...branch, ...common])).join(' UNION ALL ');
    const { rows } = await this.pool.query<AdminRow>(
      `SELECT u.*, (SELECT count(*) FROM "tasks"."artifacts" a WHERE a."task_id" = u."id") AS "artifact_count",
         (SELECT max(o."position")::text FROM "tasks"."outbox_events" o WHERE o."task_id" = u."id") AS "last_event_position"
       FROM (${union}) u ORDER BY u."created_at" DESC, u."id" DESC LIMIT ${limit + 1}`,
      params.values,
    );
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return { items: items.map(toAdminRow), next_cursor: rows.length > limit && last ? encode(['a', last.created_key, last.id]) : null };
  }

  /** The task as GetTask bounds it (the oldest messages first), its timeline from the outbox and its audit. */
  async get(request: AdminGetTaskRequest): Promise<AdminTaskDetail> {
    const taskId = request.task_id.toUpperCase();
    if (!ULID.test(taskId)) throw new RelayError('task_not_found', `No task with id ${request.task_id}`, { task_id: request.task_id });
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      try {
        return await this.readDetail(client, taskId);
      } finally {
        await client.query('COMMIT');
      }
    } finally {
      client.release();
    }
  }

  private async readDetail(client: pg.PoolClient, taskId: string): Promise<AdminTaskDetail> {
    const { rows: owners } = await client.query<{ sender_id: string }>(`SELECT "sender_id" FROM "tasks"."tasks" WHERE "id" = $1`, [taskId]);
    if (!owners[0]) throw new RelayError('task_not_found', `No task with id ${taskId}`, { task_id: taskId });
    // Read as the sender without marking anything read: the admin is nobody's read cursor.
    const read = await readTask(client as unknown as pg.Pool, { caller_id: owners[0].sender_id, task_id: taskId, after_sequence_no: 0, mark_read: false });
    const task = toTaskView(read.task, read.messages, read.artifacts, 0);
    const handles = new Map([
      [read.task.sender_id, read.task.sender_handle],
      [read.task.recipient_id, read.task.recipient_handle],
    ]);
    const { rows: auditRows } = await client.query<{ at: Date; actor_id: string; transition: string; from_state: TaskState | null; to_state: TaskState }>(
      `SELECT "at", "actor_id", "transition", "from_state", "to_state" FROM "tasks"."audit_log" WHERE "task_id" = $1 ORDER BY "id" LIMIT $2`,
      [taskId, ADMIN_TASK_LIMITS.auditRows],
    );
    const audit: TaskAuditRow[] = auditRows.map((row) => ({
      at: row.at.toISOString(),
      actor: handles.get(row.actor_id) ?? row.actor_id,
      action: row.transition,
      from_state: row.from_state,
      to_state: row.to_state,
    }));
    const actorsByState = new Map<TaskState, Array<string | null>>();
    for (const row of audit) actorsByState.set(row.to_state as TaskState, [...(actorsByState.get(row.to_state as TaskState) ?? []), row.actor]);
    const { rows: events } = await client.query<{ position: string; payload: TaskEvent }>(
      `SELECT "position"::text AS "position", "payload" FROM "tasks"."outbox_events" WHERE "task_id" = $1 AND ${TASK_EVENTS_ONLY} ORDER BY "outbox_events"."position" LIMIT $2`,
      [taskId, ADMIN_TASK_LIMITS.timelineEntries + 1],
    );
    const sequenceNos = events.map((row) => row.payload.sequence_no).filter((value): value is number => value !== null);
    const { rows: messageRows } = await client.query<MessageRow>(`SELECT * FROM "tasks"."messages" WHERE "task_id" = $1 AND "sequence_no" = ANY($2::int[])`, [
      taskId,
      [...new Set(sequenceNos)],
    ]);
    const messages = new Map(messageRows.map((row) => [row.sequence_no, toMessageView(row)]));
    const timeline: TimelineEntry[] = [];
    let bytes = Buffer.byteLength(JSON.stringify({ task, audit }));
    let newestMessage = 0;
    let truncated = events.length > ADMIN_TASK_LIMITS.timelineEntries;
    for (const { position, payload } of events.slice(0, ADMIN_TASK_LIMITS.timelineEntries)) {
      const entered = TASK_STATE_AFTER_EVENT[payload.type];
      const stateActor = entered ? actorsByState.get(entered)?.shift() : undefined;
      const message = payload.sequence_no !== null && payload.sequence_no > newestMessage ? messages.get(payload.sequence_no) : undefined;
      if (message) newestMessage = message.sequence_no;
      const entry: TimelineEntry = {
        position,
        event: payload.type,
        at: payload.occurred_at,
        actor: stateActor ?? message?.from ?? null,
        state: payload.state,
        ...(message ? { message } : {}),
        ...(payload.artifact ? { artifact: payload.artifact } : {}),
        ...(payload.task.reason !== null && entered !== undefined && entered !== 'pending' ? { reason: payload.task.reason } : {}),
      };
      bytes += Buffer.byteLength(JSON.stringify(entry)) + 1;
      if (bytes > ADMIN_TASK_LIMITS.detailReplyBytes) {
        truncated = true;
        break;
      }
      timeline.push(entry);
    }
    const last = task.messages[task.messages.length - 1];
    return { task, timeline, timeline_truncated: truncated, audit, messages_truncated: last !== undefined && last.sequence_no < task.message_count };
  }

  /** Every task event after an outbox position, oldest first, within one reply's byte budget (at least one event). */
  async events(request: AdminEventsRequest): Promise<AdminEventsReply> {
    const after = request.after_position;
    if (after !== undefined && !POSITION.test(after)) {
      throw new RelayError('invalid_params', `Last-Event-ID '${after}' is not an event id of this relay`, { field: 'Last-Event-ID' });
    }
    const { rows: newest } = await this.pool.query<{ position: string }>(
      `SELECT COALESCE(max("position"), 0)::text AS "position" FROM "tasks"."outbox_events"`,
    );
    const position = newest[0].position;
    if (after === undefined) return { events: [], has_more: false, position };
    if (BigInt(after) > BigInt(position)) {
      throw new RelayError('invalid_params', `Last-Event-ID '${after}' is not an event of this relay; connect again without it`, { field: 'Last-Event-ID' });
    }
    const { rows } = await this.pool.query<{ position: string; payload: TaskEvent }>(
      `SELECT "position"::text AS "position", "payload" FROM "tasks"."outbox_events"
       WHERE "position" > $1::bigint AND ${TASK_EVENTS_ONLY} ORDER BY "outbox_events"."position" LIMIT $2`,
      [after, ADMIN_TASK_LIMITS.eventsPageEvents + 1],
    );
    // Read after the events: a delete that took some of them before the read has moved the horizon past `after`.
    const { rows: horizon } = await this.pool.query<{ position: string }>(OUTBOX_HORIZON_SQL);
    const oldest = horizon[0]?.position ?? '0';
    if (BigInt(after) < BigInt(oldest)) {
      throw new RelayError('events_expired', `Last-Event-ID ${after} is older than the events this relay keeps; connect again from ${oldest} or without it`, {
        field: 'Last-Event-ID',
        oldest_position: oldest,
      });
    }
    const events: PositionedTaskEvent[] = [];
    let bytes = 0;
    for (const row of rows.slice(0, ADMIN_TASK_LIMITS.eventsPageEvents)) {
      bytes += Buffer.byteLength(JSON.stringify(row.payload)) + row.position.length + 32;
      if (events.length > 0 && bytes > ADMIN_TASK_LIMITS.eventsPageBytes) break;
      events.push({ position: row.position, event: row.payload });
    }
    return { events, has_more: events.length < rows.length, position };
  }

  /** Relay-wide search, with the admin list's filters. */
  async search(request: AdminSearchTasksRequest): Promise<AdminSearchPage> {
    const found = await this.runSearch(request.query, request, request.limit ?? ADMIN_TASK_LIMITS.searchDefaultLimit, request.cursor);
    return {
      items: found.rows.map((row) => ({ task: toAdminRow(row), rank: Number(row.rank), highlights: found.highlights.get(row.id) ?? [] })),
      next_cursor: found.next_cursor,
    };
  }

  /** The search of `tasks/search`: only tasks the caller takes part in, as sender, recipient or either. */
  async searchForAgent(request: AgentSearchTasksRequest): Promise<AgentSearchReply> {
    const found = await this.runSearch(
      request.query,
      { agent_id: request.caller_id, role: request.role ?? 'either', ...(request.states ? { states: request.states } : {}) },
      request.limit ?? ADMIN_TASK_LIMITS.searchDefaultLimit,
      request.cursor,
      request.caller_id,
      request.counterpart_id,
    );
    return {
      items: found.rows.map((row) => ({
        task: toTaskView(row, [], [], Number(row.unread_messages ?? 0)),
        rank: Number(row.rank),
        highlights: found.highlights.get(row.id) ?? [],
      })),
      next_cursor: found.next_cursor,
    };
  }

  /**
   * At most SEARCH_CONCURRENCY searches at once in this process, each on one connection in a
   * read-only transaction whose statements stop after SEARCH_STATEMENT_TIMEOUT_MS (or the pool's
   * own statement timeout, when that is shorter); past that a search is refused at once as
   * `overloaded` instead of waiting for the connections everyone else's requests need.
   */
  private async runSearch(
    query: string,
    filter: AdminTaskFilter,
    limit: number,
    cursor: string | undefined,
    unreadFor?: string,
    counterpartId?: string,
  ): Promise<{ rows: AdminRow[]; highlights: Map<string, SearchHighlight[]>; next_cursor: string | null }> {
    if (this.searching >= SEARCH_CONCURRENCY) {
      throw new RelayError(
        'overloaded',
        `The tasks service is running ${this.searching} searches, its maximum; retry after ${OVERLOADED_RETRY_AFTER_SECONDS} s`,
        {
          retry_after_seconds: OVERLOADED_RETRY_AFTER_SECONDS,
        },
      );
    }
    this.searching += 1;
    try {
      const client = await this.pool.connect();
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        try {
          await client.query(
            `SELECT set_config('statement_timeout', (CASE WHEN s."ms" = 0 THEN $1 ELSE least(s."ms", $1) END)::int::text, true)
             FROM (SELECT extract(epoch FROM current_setting('statement_timeout')::interval) * 1000 AS "ms") s`,
            [SEARCH_STATEMENT_TIMEOUT_MS],
          );
          return await this.searchIn(client, query, filter, limit, cursor, unreadFor, counterpartId);
        } finally {
          await client.query('COMMIT');
        }
      } finally {
        client.release();
      }
    } finally {
      this.searching -= 1;
    }
  }

  /**
   * Ranked by the best `ts_rank` of the task's matching messages and artifact names, then id;
   * keyset-paginated on (rank, id). The matches come from the GIN indexes (over the first
   * MESSAGE_SEARCH_CHARS characters of a message), at most SEARCH_CANDIDATES of each source; with
   * an agent or a context, only those of its tasks. Ranking parses a matching message's text again:
   * matches are ranked, the newest tasks' first, while the text parsed stays within
   * SEARCH_RANKED_CHARS.
   */
  private async searchIn(
    client: pg.PoolClient,
    query: string,
    filter: AdminTaskFilter,
    limit: number,
    cursor: string | undefined,
    unreadFor?: string,
    counterpartId?: string,
  ): Promise<{ rows: AdminRow[]; highlights: Map<string, SearchHighlight[]>; next_cursor: string | null }> {
    const params = new Params();
    // The query as a constant of the statement (not a CTE's column): the planner then reads the indexes with it.
    const tsquery = `websearch_to_tsquery('english', ${params.add(query)})`;
    const clauses = commonClauses(filter, params);
    const sides = agentSides(filter.agent_id, filter.role ?? 'either', params, unreadFor !== undefined);
    if (sides.length > 0) clauses.push(`(${sides.map((side) => `(${side})`).join(' OR ')})`);
    if (counterpartId !== undefined && filter.agent_id !== undefined) {
      // On an agent's endpoint: only the tasks between the caller and that agent.
      const [agent, counterpart] = [params.add(filter.agent_id), params.add(counterpartId)];
      clauses.push(`((t."sender_id" = ${agent} AND t."recipient_id" = ${counterpart}) OR (t."recipient_id" = ${agent} AND t."sender_id" = ${counterpart}))`);
    }
    if (filter.states && filter.states.length > 0) clauses.push(`t."state" = ANY(${params.add(filter.states)}::text[])`);
    const pageClauses = [...clauses];
    if (cursor !== undefined) {
      const [rankKey, id] = decode(cursor, 's', 'cursor');
      if (!RANK_KEY.test(rankKey ?? '') || !ULID.test(id ?? '')) throw invalidCursor();
      pageClauses.push(`(r."rank", t."id") < (${params.add(rankKey)}::real, ${params.add(id)})`);
    }
    const unread =
      unreadFor === undefined
        ? ''
        : `, (SELECT count(*) FROM "tasks"."messages" m WHERE m."task_id" = t."id" AND m."author_id" <> ${params.add(unreadFor)}
             AND m."sequence_no" > COALESCE((SELECT c."last_read_sequence_no" FROM "tasks"."read_cursors" c
                                             WHERE c."task_id" = t."id" AND c."participant_id" = $${params.values.length}), 0)) AS "unread_messages"`;
    // The matches come from the indexes alone, before any task is read (a materialized CTE: the
    // planner cannot start from the caller's tasks and parse each of their messages again). With an
    // agent or a context, those of its tasks among the indexes' first SEARCH_SCANNED matches;
    // relay-wide, the first SEARCH_CANDIDATES, and the filters apply to those (docs/admin-api.md#search).
    const scoped = filter.agent_id !== undefined || filter.context_id !== undefined;
    const matches = (source: 'messages' | 'artifacts', columns: string, vector: string): string =>
      `(SELECT ${columns} FROM "tasks"."${source}" x WHERE ${vector} @@ ${tsquery} LIMIT ${scoped ? SEARCH_SCANNED : SEARCH_CANDIDATES})`;
    const ofScope = (cte: string): string =>
      scoped
        ? `SELECT x.* FROM ${cte} x JOIN "tasks"."tasks" t ON t."id" = x."task_id" ${clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : ''} LIMIT ${SEARCH_CANDIDATES}`
        : `SELECT x.* FROM ${cte} x`;
    const where = pageClauses.length > 0 ? `WHERE ${pageClauses.join(' AND ')}` : '';
    const { rows } = await client.query<AdminRow & { message_hits: Array<[number, string]> | null }>(
      `WITH message_matches AS MATERIALIZED ${matches('messages', `x."task_id", x."sequence_no", x."parts", x."size_bytes"`, MESSAGE_SEARCH_VECTOR)},
       artifact_matches AS MATERIALIZED ${matches('artifacts', `x."task_id", x."name", x."fields"`, ARTIFACT_SEARCH_VECTOR)},
       matched AS (
         SELECT m."task_id", m."sequence_no", m."parts", least(m."size_bytes", ${MESSAGE_SEARCH_CHARS}) + ${RANKED_ROW_CHARS} AS "chars"
         FROM (${ofScope('message_matches')}) m
       ),
       message_hits AS (
         SELECT x."task_id", x."sequence_no", ts_rank(${MESSAGE_SEARCH_VECTOR}, ${tsquery}) AS "rank"
         FROM (SELECT matched.*, sum(matched."chars") OVER (ORDER BY matched."task_id" DESC, matched."sequence_no") AS "through" FROM matched) x
         WHERE x."through" - x."chars" < ${SEARCH_RANKED_CHARS}
       ),
       artifact_hits AS (SELECT a."task_id", ts_rank(${ARTIFACT_SEARCH_VECTOR}, ${tsquery}) AS "rank" FROM (${ofScope('artifact_matches')}) a),
       r AS (
         SELECT "task_id", max("rank") AS "rank" FROM (
           SELECT "task_id", "rank" FROM message_hits UNION ALL SELECT "task_id", "rank" FROM artifact_hits
         ) hits GROUP BY "task_id"
       ),
       page AS (
         SELECT t.*, r."rank" FROM r JOIN "tasks"."tasks" t ON t."id" = r."task_id" ${where}
         ORDER BY r."rank" DESC, t."id" DESC LIMIT ${limit + 1}
       )
       SELECT ${TASK_COLUMNS}, ${CREATED_KEY_SQL} AS "created_key", t."rank", t."rank"::text AS "rank_key",
         (SELECT count(*) FROM "tasks"."artifacts" a WHERE a."task_id" = t."id") AS "artifact_count"${unread},
         (SELECT json_agg(json_build_array(h."sequence_no", h."rank"::text) ORDER BY h."rank" DESC, h."sequence_no") FROM (
            SELECT h."sequence_no", h."rank" FROM message_hits h WHERE h."task_id" = t."id" ORDER BY h."rank" DESC, h."sequence_no" LIMIT ${ADMIN_TASK_LIMITS.highlightsPerHit}
          ) h) AS "message_hits"
       FROM page t ORDER BY t."rank" DESC, t."id" DESC`,
      params.values,
    );
    const page = rows.slice(0, limit);
    const messageHits = page.flatMap((row) => (row.message_hits ?? []).map(([sequenceNo, rank]) => ({ task_id: row.id, sequence_no: sequenceNo, rank })));
    const highlights = await this.highlights(
      client,
      query,
      page.map((row) => row.id),
      messageHits,
    );
    const last = page[page.length - 1];
    return { rows: page, highlights, next_cursor: rows.length > limit && last ? encode(['s', last.rank_key as string, last.id]) : null };
  }

  /**
   * Up to three highlights per task (its best matching messages, as ranked, then artifact names), as
   * fragments; a message's from the first HEADLINE_CHARS characters of its text.
   */
  private async highlights(
    client: pg.PoolClient,
    query: string,
    taskIds: string[],
    messageHits: Array<{ task_id: string; sequence_no: number; rank: string }>,
  ): Promise<Map<string, SearchHighlight[]>> {
    const result = new Map<string, SearchHighlight[]>();
    if (taskIds.length === 0) return result;
    const { rows } = await client.query<{
      task_id: string;
      source: 'message' | 'artifact';
      sequence_no: number | null;
      name: string | null;
      headline: string;
    }>(
      `WITH q AS (SELECT websearch_to_tsquery('english', $1) AS "query"),
       found AS (
         SELECT m."task_id", 'message' AS "source", m."sequence_no", NULL::text AS "name", h."rank"::real AS "rank",
           ts_headline('english', translate(left(${MESSAGE_SEARCH_TEXT}, ${HEADLINE_CHARS}), E'\\x01\\x02', ''), q."query", $3) AS "headline"
         FROM unnest($5::bpchar[], $6::int[], $7::text[]) AS h("task_id", "sequence_no", "rank")
         -- One message by its key each (LIMIT keeps the planner from joining the whole table instead).
         CROSS JOIN LATERAL (SELECT x."task_id", x."sequence_no", x."parts" FROM "tasks"."messages" x
                             WHERE x."task_id" = h."task_id" AND x."sequence_no" = h."sequence_no" LIMIT 1) m
         CROSS JOIN q
         UNION ALL
         SELECT a."task_id", 'artifact', NULL, COALESCE(a."name", a."fields"->>'path'), ts_rank(${ARTIFACT_SEARCH_VECTOR}, q."query"),
           ts_headline('english', translate(${ARTIFACT_SEARCH_TEXT}, E'\\x01\\x02', ''), q."query", $3 || ', HighlightAll=true')
         FROM "tasks"."artifacts" a CROSS JOIN q
         WHERE a."task_id" = ANY($2::text[]) AND ${ARTIFACT_SEARCH_VECTOR} @@ q."query"
       )
       SELECT "task_id", "source", "sequence_no", "name", "headline" FROM (
         SELECT found.*, row_number() OVER (PARTITION BY "task_id" ORDER BY "rank" DESC, "source" DESC, "sequence_no") AS "n" FROM found
       ) ranked WHERE "n" <= $4 ORDER BY "task_id", "n"`,
      [
        query,
        taskIds,
        HEADLINE_OPTIONS,
        ADMIN_TASK_LIMITS.highlightsPerHit,
        messageHits.map((hit) => hit.task_id),
        messageHits.map((hit) => hit.sequence_no),
        messageHits.map((hit) => hit.rank),
      ],
    );
    for (const row of rows) {
      const highlight: SearchHighlight =
        row.source === 'message'
          ? { source: 'message', sequence_no: row.sequence_no as number, fragments: fragmentsOf(row.headline) }
          : { source: 'artifact', artifact_name: row.name ?? '', fragments: fragmentsOf(row.headline) };
      result.set(row.task_id, [...(result.get(row.task_id) ?? []), highlight]);
    }
    return result;
  }

  async counts(request: AdminCountsRequest): Promise<AdminCountsReply> {
    const zero = (): Record<TaskState, number> => Object.fromEntries(TASK_STATES.map((state) => [state, 0])) as Record<TaskState, number>;
    const reply: AdminCountsReply = { inbox: zero(), sent: zero() };
    const { rows } = await this.pool.query<{ side: 'inbox' | 'sent'; state: TaskState; count: number }>(
      `SELECT 'inbox' AS "side", "state", count(*)::int AS "count" FROM "tasks"."tasks" WHERE "recipient_id" = $1 GROUP BY "state"
       UNION ALL
       SELECT 'sent', "state", count(*)::int FROM "tasks"."tasks" WHERE "sender_id" = $1 GROUP BY "state"`,
      [request.agent_id],
    );
    for (const row of rows) reply[row.side][row.state] = row.count;
    return reply;
  }

  async overview(): Promise<AdminOverviewReply> {
    const [perMinute, open, oldest, lag] = await Promise.all([
      this.pool.query<{ minute: Date; created: number; completed: number }>(
        `WITH minutes AS (
           SELECT generate_series(date_trunc('minute', now()) - interval '59 minutes', date_trunc('minute', now()), interval '1 minute') AS "minute"
         ),
         created AS (
           SELECT date_trunc('minute', "created_at") AS "minute", count(*)::int AS "count" FROM "tasks"."tasks"
           WHERE "created_at" >= date_trunc('minute', now()) - interval '59 minutes' GROUP BY 1
         ),
         completed AS (
           SELECT date_trunc('minute', "completed_at") AS "minute", count(*)::int AS "count" FROM "tasks"."tasks"
           WHERE "completed_at" >= date_trunc('minute', now()) - interval '59 minutes' GROUP BY 1
         )
         SELECT m."minute", COALESCE(c."count", 0) AS "created", COALESCE(d."count", 0) AS "completed"
         FROM minutes m LEFT JOIN created c ON c."minute" = m."minute" LEFT JOIN completed d ON d."minute" = m."minute"
         ORDER BY m."minute"`,
      ),
      this.pool.query<{ state: 'pending' | 'accepted' | 'input_required'; count: number }>(
        `SELECT "state", count(*)::int AS "count" FROM "tasks"."tasks" WHERE "state" IN ('pending', 'accepted', 'input_required') GROUP BY "state"`,
      ),
      this.pool.query<{ id: string; created_at: Date; sender_handle: string; recipient_handle: string }>(
        `SELECT "id", "created_at", "sender_handle", "recipient_handle" FROM "tasks"."tasks" WHERE "state" = 'pending' ORDER BY "created_at", "id" LIMIT 1`,
      ),
      this.pool.query<{ unpublished: number; oldest_ms: number | null }>(
        `SELECT count(*)::int AS "unpublished", floor(extract(epoch FROM now() - min("created_at")) * 1000)::float8 AS "oldest_ms"
         FROM "tasks"."outbox_events" WHERE "published_at" IS NULL`,
      ),
    ]);
    const openByState = { pending: 0, accepted: 0, input_required: 0 };
    for (const row of open.rows) openByState[row.state] = row.count;
    const first = oldest.rows[0];
    return {
      per_minute: perMinute.rows.map((row) => ({ minute: row.minute.toISOString(), created: row.created, completed: row.completed })),
      open_by_state: openByState,
      oldest_pending: first
        ? { id: first.id, created_at: first.created_at.toISOString(), sender: first.sender_handle, recipient: first.recipient_handle }
        : null,
      outbox_lag: { unpublished: lag.rows[0].unpublished, oldest_unpublished_ms: lag.rows[0].oldest_ms === null ? null : Math.max(0, lag.rows[0].oldest_ms) },
    };
  }
}

/** `ts_headline` text with its StartSel/StopSel marks, as plain fragments: the console marks the matches, never the server's HTML. */
export function fragmentsOf(headline: string): HighlightFragment[] {
  const fragments: HighlightFragment[] = [];
  let rest = headline;
  while (rest.length > 0) {
    const start = rest.indexOf(START_SEL);
    if (start < 0) {
      fragments.push({ text: rest, match: false });
      break;
    }
    if (start > 0) fragments.push({ text: rest.slice(0, start), match: false });
    const stop = rest.indexOf(STOP_SEL, start + 1);
    const end = stop < 0 ? rest.length : stop;
    if (end > start + 1) fragments.push({ text: rest.slice(start + 1, end), match: true });
    rest = stop < 0 ? '' : rest.slice(stop + 1);
  }
  // Neighbouring matches ("refactored users") read as one mark.
  return fragments.reduce<HighlightFragment[]>((merged, fragment) => {
    const previous = merged[merged.length - 1];
    if (previous && previous.match === fragment.match) previous.text += fragment.text;
    else merged.push({ ...fragment });
    return merged;
  }, []);
}
