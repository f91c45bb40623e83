import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { ADMIN_TASK_LIMITS, type AdminListTasksRequest, type AdminTaskPage } from '@app/contracts';
import { pgPoolOf } from '@app/database';
import { TASK_COLUMNS } from '../store/task-rows';
import { decodeListCursor, encodeListCursor } from './admin-cursor';
import { toAdminRow, type AdminRow } from './admin-row';
import { agentSides, commonClauses, CREATED_KEY_SQL, Params } from './admin-sql';

/** The admin API's list of tasks across all agents: keyset pages that each read an index in order. */
@Injectable()
export class ListAdminTasks {
  private readonly pool: pg.Pool;

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
      const { createdKey, id } = decodeListCursor(request.cursor);
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
    return { items: items.map(toAdminRow), next_cursor: rows.length > limit && last ? encodeListCursor(last.created_key, last.id) : null };
  }
}
