import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { TASK_STATES, type AdminCountsReply, type AdminCountsRequest, type TaskState } from '@app/contracts';
import { pgPoolOf } from '@app/database';

/** One agent's tasks per state, as recipient (inbox) and as sender (sent), for the admin API. */
@Injectable()
export class AdminTaskCounts {
  private readonly pool: pg.Pool;

  constructor(@Inject(DataSource) dataSource: DataSource) {
    this.pool = pgPoolOf(dataSource);
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
}
