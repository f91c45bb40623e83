import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { ADMIN_TASK_LIMITS, OVERLOADED_RETRY_AFTER_SECONDS, RelayError, type AdminTaskFilter, type SearchHighlight } from '@app/contracts';
import { pgPoolOf } from '@app/database';
import { ARTIFACT_SEARCH_VECTOR } from '../../database/migrations/1764560000000-ConsoleReads';
import { MESSAGE_SEARCH_CHARS, MESSAGE_SEARCH_VECTOR } from '../../database/migrations/1764590000000-BoundedSearch';
import { unreadCountSql } from '../store/sql/unread-count.sql';
import { TASK_COLUMNS } from '../store/task-rows';
import { decodeSearchCursor, encodeSearchCursor } from './admin-cursor';
import type { AdminRow } from './admin-row';
import { agentSides, commonClauses, CREATED_KEY_SQL, Params } from './admin-sql';
import { searchHighlights } from './search-highlights';

/** Matches of each source (messages, artifacts) a search ranks at most (docs/admin-api.md#search). */
export const SEARCH_CANDIDATES = 10_000;
/** Matches of each source an agent's or a context's search reads from the index at most, to find those of its tasks. */
export const SEARCH_SCANNED = 100_000;
/** Characters of message text one search parses again to rank its matches (each counted up to MESSAGE_SEARCH_CHARS, plus RANKED_ROW_CHARS). */
export const SEARCH_RANKED_CHARS = 2_000_000;
const RANKED_ROW_CHARS = 256;
/** Searches one tasks process runs at once (each on one connection of the pool); more are refused as `overloaded`. */
export const SEARCH_CONCURRENCY = 4;
/** Searches one caller (an agent, or the admin API's relay-wide search) runs at once in a process: one caller at its limit leaves the others room. */
export const SEARCH_CONCURRENCY_PER_CALLER = 2;
/** Who a search counts against: the relay-wide search of the admin API, or an agent's own (by its id). */
export type SearchCaller = 'admin' | { agent_id: string };
/** The longest one statement of a search runs (the pool's statement timeout instead, when that is shorter). */
export const SEARCH_STATEMENT_TIMEOUT_MS = 3000;

export interface FoundTasks {
  rows: AdminRow[];
  highlights: Map<string, SearchHighlight[]>;
  next_cursor: string | null;
}

/**
 * The full-text search of tasks, relay-wide (the admin API) or within one agent's tasks
 * (`tasks/search`): one instance per process, since both share its limit of searches at once.
 */
@Injectable()
export class TaskSearch {
  private readonly pool: pg.Pool;
  /** Searches running now (run), in all and by caller. */
  private searching = 0;
  private readonly searchingBy = new Map<string, number>();

  constructor(@Inject(DataSource) dataSource: DataSource) {
    this.pool = pgPoolOf(dataSource);
  }

  /**
   * At most SEARCH_CONCURRENCY searches at once in this process, and SEARCH_CONCURRENCY_PER_CALLER
   * of one caller, each on one connection in a read-only transaction whose statements stop after
   * SEARCH_STATEMENT_TIMEOUT_MS (or the pool's own statement timeout, when that is shorter); past
   * either a search is refused at once as `overloaded` instead of waiting for the connections
   * everyone else's requests need.
   */
  async run(
    caller: SearchCaller,
    query: string,
    filter: AdminTaskFilter,
    limit: number,
    cursor: string | undefined,
    unreadFor?: string,
    counterpartId?: string,
  ): Promise<FoundTasks> {
    const callerKey = caller === 'admin' ? 'admin' : `agent:${caller.agent_id}`;
    const mine = this.searchingBy.get(callerKey) ?? 0;
    if (mine >= SEARCH_CONCURRENCY_PER_CALLER) {
      throw new RelayError(
        'overloaded',
        `${caller === 'admin' ? 'The relay-wide search is' : 'You are'} running ${mine} searches, the most one caller runs at once; retry after ${OVERLOADED_RETRY_AFTER_SECONDS} s`,
        { retry_after_seconds: OVERLOADED_RETRY_AFTER_SECONDS },
      );
    }
    if (this.searching >= SEARCH_CONCURRENCY) {
      throw new RelayError(
        'overloaded',
        `The tasks service is running ${this.searching} searches, its maximum; retry after ${OVERLOADED_RETRY_AFTER_SECONDS} s`,
        {
          retry_after_seconds: OVERLOADED_RETRY_AFTER_SECONDS,
        },
      );
    }
    this.searchingBy.set(callerKey, mine + 1);
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
      const left = (this.searchingBy.get(callerKey) ?? 1) - 1;
      if (left > 0) this.searchingBy.set(callerKey, left);
      else this.searchingBy.delete(callerKey);
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
  ): Promise<FoundTasks> {
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
      const { rankKey, id } = decodeSearchCursor(cursor);
      pageClauses.push(`(r."rank", t."id") < (${params.add(rankKey)}::real, ${params.add(id)})`);
    }
    const unread = unreadFor === undefined ? '' : `, ${unreadCountSql('t."id"', params.add(unreadFor))} AS "unread_messages"`;
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
    const highlights = await searchHighlights(
      client,
      query,
      page.map((row) => row.id),
      messageHits,
    );
    const last = page[page.length - 1];
    return { rows: page, highlights, next_cursor: rows.length > limit && last ? encodeSearchCursor(last.rank_key as string, last.id) : null };
  }
}
