import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { ADMIN_TASK_LIMITS, RelayError, type AdminEventsReply, type AdminEventsRequest, type PositionedTaskEvent, type TaskEvent } from '@app/contracts';
import { pgPoolOf } from '@app/database';
import { OUTBOX_HORIZON_SQL } from '../../retention/retention-sql';
import { TASK_EVENTS_ONLY } from './admin-sql';

const POSITION = /^[0-9]{1,19}$/;

/** The relay's task events for the admin API's event stream. */
@Injectable()
export class AdminTaskEvents {
  private readonly pool: pg.Pool;

  constructor(@Inject(DataSource) dataSource: DataSource) {
    this.pool = pgPoolOf(dataSource);
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
}
