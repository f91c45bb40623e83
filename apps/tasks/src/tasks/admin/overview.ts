import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import type { AdminOverviewReply } from '@app/contracts';
import { pgPoolOf } from '@app/database';

/** The relay at a glance for the admin API: tasks created and completed per minute, open tasks, the oldest pending one, the outbox's lag. */
@Injectable()
export class AdminOverview {
  private readonly pool: pg.Pool;

  constructor(@Inject(DataSource) dataSource: DataSource) {
    this.pool = pgPoolOf(dataSource);
  }

  /** The whole relay's, or with `orgs` (a person's scope) only what tasks one of whose parties is in them show. */
  async overview(orgs?: string[]): Promise<AdminOverviewReply> {
    // $1: null for the whole relay, or the orgs.
    const inOrgs = (alias: string): string =>
      `($1::text[] IS NULL OR split_part(${alias}"sender_handle", '@', 2) = ANY($1::text[]) OR split_part(${alias}"recipient_handle", '@', 2) = ANY($1::text[]))`;
    const scope = [orgs ?? null];
    const [perMinute, open, oldest, lag] = await Promise.all([
      this.pool.query<{ minute: Date; created: number; completed: number }>(
        `WITH minutes AS (
           SELECT generate_series(date_trunc('minute', now()) - interval '59 minutes', date_trunc('minute', now()), interval '1 minute') AS "minute"
         ),
         created AS (
           SELECT date_trunc('minute', "created_at") AS "minute", count(*)::int AS "count" FROM "tasks"."tasks"
           WHERE "created_at" >= date_trunc('minute', now()) - interval '59 minutes' AND ${inOrgs('')} GROUP BY 1
         ),
         completed AS (
           SELECT date_trunc('minute', "completed_at") AS "minute", count(*)::int AS "count" FROM "tasks"."tasks"
           WHERE "completed_at" >= date_trunc('minute', now()) - interval '59 minutes' AND ${inOrgs('')} GROUP BY 1
         )
         SELECT m."minute", COALESCE(c."count", 0) AS "created", COALESCE(d."count", 0) AS "completed"
         FROM minutes m LEFT JOIN created c ON c."minute" = m."minute" LEFT JOIN completed d ON d."minute" = m."minute"
         ORDER BY m."minute"`,
        scope,
      ),
      this.pool.query<{ state: 'pending' | 'accepted' | 'input_required'; count: number }>(
        `SELECT "state", count(*)::int AS "count" FROM "tasks"."tasks" WHERE "state" IN ('pending', 'accepted', 'input_required') AND ${inOrgs('')} GROUP BY "state"`,
        scope,
      ),
      this.pool.query<{ id: string; created_at: Date; sender_handle: string; recipient_handle: string }>(
        `SELECT "id", "created_at", "sender_handle", "recipient_handle" FROM "tasks"."tasks" WHERE "state" = 'pending' AND ${inOrgs('')} ORDER BY "created_at", "id" LIMIT 1`,
        scope,
      ),
      this.pool.query<{ unpublished: number; oldest_ms: number | null }>(
        orgs === undefined
          ? `SELECT count(*)::int AS "unpublished", floor(extract(epoch FROM now() - min("created_at")) * 1000)::float8 AS "oldest_ms"
             FROM "tasks"."outbox_events" WHERE "published_at" IS NULL`
          : `SELECT count(*)::int AS "unpublished", floor(extract(epoch FROM now() - min(o."created_at")) * 1000)::float8 AS "oldest_ms"
             FROM "tasks"."outbox_events" o JOIN "tasks"."tasks" t ON t."id" = o."task_id" WHERE o."published_at" IS NULL AND ${inOrgs('t.')}`,
        orgs === undefined ? [] : scope,
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
