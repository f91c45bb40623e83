import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { ADMIN_TASK_LIMITS, RelayError, type AdminTaskChainReply, type AdminTaskChainRequest } from '@app/contracts';
import { pgPoolOf } from '@app/database';
import { TASK_COLUMNS } from '../store/task-rows';
import { TASK_ID } from './admin-cursor';
import { toAdminRow, type AdminRow } from './admin-row';

/**
 * The handoffs a chain read chooses from, each list on an index: the path from the task up to the
 * root (one primary-key read per level; a chain is at most 1000 deep), the task's children (its
 * depth's range of the root's index) and the tree from the root down by depth, then creation.
 */
const CHAIN_CANDIDATES_SQL = `
WITH RECURSIVE path AS (
  SELECT t."id", t."parent_task_id" FROM "tasks"."tasks" t WHERE t."id" = $1
  UNION ALL
  SELECT p."id", p."parent_task_id" FROM "tasks"."tasks" p JOIN path ON p."id" = path."parent_task_id"
)
SELECT 'path' AS "list", path."id"::text AS "id" FROM path
UNION ALL
(SELECT 'child', t."id"::text FROM "tasks"."tasks" t
 WHERE t."root_task_id" = $2 AND t."depth" = $3 + 1 AND t."parent_task_id" = $1 ORDER BY t."id" LIMIT $4)
UNION ALL
(SELECT 'tree', t."id"::text FROM "tasks"."tasks" t WHERE t."root_task_id" = $2 ORDER BY t."depth", t."id" LIMIT $4)`;

/** A handoff's chain for the admin API: the path to it, its children and the tree from the root, bounded (docs/chains.md). */
@Injectable()
export class AdminTaskChain {
  private readonly pool: pg.Pool;

  constructor(@Inject(DataSource) dataSource: DataSource) {
    this.pool = pgPoolOf(dataSource);
  }

  async chain(request: AdminTaskChainRequest): Promise<AdminTaskChainReply> {
    const taskId = request.task_id.toUpperCase();
    if (!TASK_ID.test(taskId)) throw new RelayError('task_not_found', `No task with id ${request.task_id}`, { task_id: request.task_id });
    const limit = request.limit ?? ADMIN_TASK_LIMITS.chainDefaultNodes;
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      try {
        return await this.read(client, taskId, limit);
      } finally {
        await client.query('COMMIT');
      }
    } finally {
      client.release();
    }
  }

  private async read(client: pg.PoolClient, taskId: string, limit: number): Promise<AdminTaskChainReply> {
    const { rows: found } = await client.query<{ root_task_id: string; depth: number }>(
      `SELECT COALESCE("root_task_id", "id") AS "root_task_id", "depth" FROM "tasks"."tasks" WHERE "id" = $1`,
      [taskId],
    );
    if (!found[0]) throw new RelayError('task_not_found', `No task with id ${taskId}`, { task_id: taskId });
    const { root_task_id: rootTaskId, depth } = found[0];
    const { rows: candidates } = await client.query<{ list: 'path' | 'child' | 'tree'; id: string }>(CHAIN_CANDIDATES_SQL, [taskId, rootTaskId, depth, limit]);
    // The path always; then the task's children, then the tree from the root down, while the limit lasts.
    // The tree is a prefix in (depth, id) order, so every handoff chosen from it finds its parent chosen too.
    const chosen = new Set(candidates.filter((row) => row.list === 'path').map((row) => row.id));
    const onPath = chosen.size;
    const others = [
      ...candidates.filter((row) => row.list === 'child').map((row) => row.id),
      rootTaskId,
      ...candidates.filter((row) => row.list === 'tree').map((row) => row.id),
    ];
    for (const id of others) {
      if (chosen.size - onPath >= limit) break;
      chosen.add(id);
    }
    const { rows } = await client.query<AdminRow>(
      `SELECT ${TASK_COLUMNS}, '' AS "created_key", (SELECT count(*) FROM "tasks"."artifacts" a WHERE a."task_id" = t."id") AS "artifact_count"
       FROM "tasks"."tasks" t WHERE t."id" = ANY($1::text[]) ORDER BY t."depth", t."id"`,
      [[...chosen]],
    );
    const { rows: counted } = await client.query<{ total: number }>(
      `SELECT (SELECT count(*) FROM "tasks"."tasks" n WHERE n."root_task_id" = $1)::int + 1 AS "total"`,
      [rootTaskId],
    );
    const total = counted[0].total;
    return { task_id: taskId, root_task_id: rootTaskId, nodes: rows.map(toAdminRow), total, nodes_truncated: total > rows.length };
  }
}
