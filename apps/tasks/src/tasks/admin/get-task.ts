import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import {
  ADMIN_TASK_LIMITS,
  RelayError,
  TASK_STATE_AFTER_EVENT,
  type AdminGetTaskRequest,
  type AdminTaskDetail,
  type TaskAuditRow,
  type TaskEvent,
  type TaskState,
  type TimelineEntry,
} from '@app/contracts';
import { pgPoolOf } from '@app/database';
import { readTask } from '../store/read-query';
import { toMessageView, toTaskView, type MessageRow } from '../store/task-rows';
import { TASK_ID } from './admin-cursor';
import { TASK_EVENTS_ONLY } from './admin-sql';

/** One task for the admin API: as GetTask bounds it, with its timeline from the outbox and its audit. */
@Injectable()
export class GetAdminTask {
  private readonly pool: pg.Pool;

  constructor(@Inject(DataSource) dataSource: DataSource) {
    this.pool = pgPoolOf(dataSource);
  }

  /** The task as GetTask bounds it (the oldest messages first), its timeline from the outbox and its audit. */
  async get(request: AdminGetTaskRequest): Promise<AdminTaskDetail> {
    const taskId = request.task_id.toUpperCase();
    if (!TASK_ID.test(taskId)) throw new RelayError('task_not_found', `No task with id ${request.task_id}`, { task_id: request.task_id });
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
}
