import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { DataSource, EntityManager } from 'typeorm';
import { RelayError, TASK_LIMITS, type ArtifactInput, type MessageInput, type PartView, type TaskEventArtifact, type TaskView } from '@app/contracts';
import { appendedBytes, artifactBytes, artifactLimitError } from './artifact-limits';
import { messageBytes, messageFromJson, messagesWithinBudgetSql, type JsonMessage } from './message-budget';
import { AuditLogEntity } from './audit-log.entity';
import type { Party } from './state-machine';
import { firstText, TASK_COLUMNS, toTaskView, type ArtifactRow, type MessageRow, type TaskRow } from './task-rows';

interface PgError {
  code?: string;
  constraint?: string;
  driverError?: { code?: string; constraint?: string };
}

/** The SQLSTATE and constraint of a failed statement, whether TypeORM wrapped the driver's error or not. */
export function pgError(error: unknown): { code?: string; constraint?: string } {
  const candidate = error as PgError;
  return candidate.driverError ?? candidate;
}

/** A write refused because the message id is taken in the task, as the caller's error; anything else as it was. */
export function duplicateMessageIdOr(error: unknown): unknown {
  const { code, constraint } = pgError(error);
  if (code === '23505' && constraint === 'messages_task_id_id_key') {
    return new RelayError('invalid_params', 'message.message_id is already used by another message of this thread', { field: 'message.message_id' });
  }
  return error;
}

/** The pg pool behind TypeORM: the one-statement hot paths send their statement to it directly. */
export function pgPoolOf(dataSource: DataSource): pg.Pool {
  return (dataSource.driver as unknown as { master: pg.Pool }).master;
}

/** Rows of an `UPDATE … RETURNING` (TypeORM answers `[rows, count]` for an UPDATE). */
export function updatedRows<T>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as T[];
  return result as T[];
}

/** Parts as plain JSON (class instances of the validated request become plain objects). */
export function plainParts(parts: MessageInput['parts']): PartView[] {
  return JSON.parse(JSON.stringify(parts)) as PartView[];
}

/** One row of a task's audit log: who moved it from which state to which. */
export type AuditEntry = Pick<AuditLogEntity, 'taskId' | 'actorId' | 'transition' | 'fromState' | 'toState' | 'at'> &
  Partial<Pick<AuditLogEntity, 'sessionId' | 'reason'>>;

/**
 * The statements of the append use case (send-task.ts: an append's transaction on the task's
 * locked row) and of the idempotent replay (send-idempotency.ts), each on the caller's transaction.
 * The create, the transition and the read keep theirs in sql/.
 */
@Injectable()
export class TaskRepository {
  async loadTask(manager: EntityManager, taskId: string, forUpdate = false): Promise<TaskRow> {
    const [task]: TaskRow[] = await manager.query(`SELECT ${TASK_COLUMNS} FROM "tasks"."tasks" t WHERE t."id" = $1${forUpdate ? ' FOR UPDATE' : ''}`, [
      taskId.toUpperCase(),
    ]);
    if (!task) throw new RelayError('thread_not_found', `No task with id ${taskId}`, { task_id: taskId });
    return task;
  }

  async unreadCount(manager: EntityManager, taskId: string, callerId: string): Promise<number> {
    const [{ unread }] = await manager.query(
      `SELECT count(*)::int AS "unread" FROM "tasks"."messages" m
       WHERE m."task_id" = $1 AND m."author_id" <> $2
         AND m."sequence_no" > COALESCE((SELECT r."last_read_sequence_no" FROM "tasks"."read_cursors" r WHERE r."task_id" = $1 AND r."participant_id" = $2), 0)`,
      [taskId, callerId],
    );
    return unread;
  }

  /**
   * The task with its most recent `historyLength` messages (all when undefined), or the messages
   * after `afterSequenceNo`, within the reply's byte budget: the newest ones are kept, or with
   * `afterSequenceNo` the oldest ones (the caller pages on from the last one it got).
   */
  async view(manager: EntityManager, task: TaskRow, historyLength: number | undefined, unread: number, afterSequenceNo?: number): Promise<TaskView> {
    const lowerBound = Math.max(afterSequenceNo ?? 0, historyLength === undefined ? 0 : task.message_count - historyLength);
    let messages: MessageRow[] = [];
    if (historyLength !== 0) {
      const [row]: Array<{ messages: JsonMessage[] }> = await manager.query(`SELECT ${messagesWithinBudgetSql('$1', '$2', '$3')} AS "messages"`, [
        task.id,
        lowerBound,
        afterSequenceNo !== undefined,
      ]);
      messages = row.messages.map(messageFromJson);
    }
    const artifacts: ArtifactRow[] = await manager.query(`SELECT * FROM "tasks"."artifacts" WHERE "task_id" = $1 ORDER BY "position"`, [task.id]);
    return toTaskView(task, messages, artifacts, unread);
  }

  /** Appends a message to a task whose row this transaction has locked (FOR UPDATE or UPDATE). */
  async appendMessage(manager: EntityManager, current: TaskRow, party: Party, input: MessageInput, now: Date): Promise<{ task: TaskRow; message: MessageRow }> {
    if (current.message_count >= TASK_LIMITS.messagesPerTask) {
      throw new RelayError('thread_message_limit', `The task holds the maximum of ${TASK_LIMITS.messagesPerTask} messages`, {
        limit: TASK_LIMITS.messagesPerTask,
      });
    }
    const sequenceNo = current.message_count + 1;
    const [task] = updatedRows<TaskRow>(
      await manager.query(
        `UPDATE "tasks"."tasks" t SET "message_count" = $2, "updated_at" = $3, "version" = t."version" + 1
         WHERE t."id" = $1 AND t."message_count" = $4 RETURNING ${TASK_COLUMNS}`,
        [current.id, sequenceNo, now, current.message_count],
      ),
    );
    if (!task) throw new RelayError('state_changed', 'Another message was appended to the thread at the same time', { task_id: current.id });
    const message = await this.insertMessage(manager, task, party, sequenceNo, input, plainParts(input.parts), now);
    return { task, message };
  }

  async insertMessage(
    manager: EntityManager,
    task: TaskRow,
    party: Party,
    sequenceNo: number,
    input: MessageInput,
    parts: PartView[],
    now: Date,
  ): Promise<MessageRow> {
    const partsJson = JSON.stringify(parts);
    const payloadJson = JSON.stringify(input.payload ?? {});
    const body = firstText(parts);
    const [message]: MessageRow[] = await manager.query(
      `INSERT INTO "tasks"."messages" ("task_id", "sequence_no", "id", "author", "author_id", "from_handle", "body", "parts", "payload", "created_at", "size_bytes")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
      [
        task.id,
        sequenceNo,
        input.message_id ?? randomUUID(),
        party,
        party === 'sender' ? task.sender_id : task.recipient_id,
        party === 'sender' ? task.sender_handle : task.recipient_handle,
        body,
        partsJson,
        payloadJson,
        now,
        messageBytes(body, partsJson, payloadJson),
      ],
    );
    return message;
  }

  /**
   * Adds, replaces or appends to the task's artifacts, on a task row this transaction has
   * locked. Each write checks the task's artifact caps in its own statement and writes nothing
   * past them. Returns each artifact as its `artifact_updated` event carries it (the chunk, for an append).
   */
  async upsertArtifacts(manager: EntityManager, taskId: string, artifacts: ArtifactInput[] | undefined, now: Date): Promise<TaskEventArtifact[]> {
    const caps = [TASK_LIMITS.artifactsPerTask, TASK_LIMITS.artifactBytesPerTask];
    const changed: TaskEventArtifact[] = [];
    for (const artifact of artifacts ?? []) {
      const artifactId = artifact.artifact_id ?? randomUUID();
      const parts = artifact.parts ? plainParts(artifact.parts) : [];
      const [existing]: ArtifactRow[] = await manager.query(`SELECT * FROM "tasks"."artifacts" WHERE "task_id" = $1 AND "artifact_id" = $2`, [
        taskId,
        artifactId,
      ]);
      if (existing && artifact.append) {
        const added = appendedBytes(artifact, parts);
        const appended: unknown[] = await manager.query(
          `UPDATE "tasks"."artifacts" SET "parts" = "parts" || $3::jsonb, "last_chunk" = $4, "updated_at" = $5,
             "metadata" = "metadata" || $6::jsonb, "size_bytes" = "size_bytes" + $7
           WHERE "task_id" = $1 AND "artifact_id" = $2
             AND (SELECT sum(o."size_bytes") FROM "tasks"."artifacts" o WHERE o."task_id" = $1) + $7::int <= $8::int
           RETURNING 1`,
          [taskId, artifactId, JSON.stringify(parts), artifact.last_chunk ?? false, now, JSON.stringify(artifact.metadata ?? {}), added, caps[1]],
        );
        if (updatedRows(appended).length === 0) throw artifactLimitError(await this.artifactsHeld(manager, taskId), { count: 0, bytes: added });
        changed.push({
          artifact_id: artifactId,
          type: existing.type,
          fields: existing.fields,
          name: existing.name,
          description: existing.description,
          parts,
          metadata: artifact.metadata ?? {},
          append: true,
          last_chunk: artifact.last_chunk ?? false,
        });
        continue;
      }
      const stored = {
        type: artifact.type ?? null,
        fields: artifact.fields ?? {},
        name: artifact.name ?? null,
        description: artifact.description ?? null,
        parts,
        metadata: artifact.metadata ?? {},
      };
      const size = artifactBytes(stored);
      const values = [
        taskId,
        artifactId,
        stored.type,
        JSON.stringify(stored.fields),
        stored.name,
        stored.description,
        JSON.stringify(parts),
        JSON.stringify(stored.metadata),
        artifact.append ? (artifact.last_chunk ?? false) : (artifact.last_chunk ?? true),
        now,
        size,
        ...caps,
      ];
      // The task's other artifacts, and this one at its new size, within both caps.
      const withinCaps = `(SELECT count(*) < $12::int AND COALESCE(sum(o."size_bytes"), 0) + $11::int <= $13::int
        FROM "tasks"."artifacts" o WHERE o."task_id" = $1::text AND o."artifact_id" <> $2::text)`;
      const written: unknown[] = existing
        ? await manager.query(
            `UPDATE "tasks"."artifacts" SET "type" = $3, "fields" = $4, "name" = $5, "description" = $6, "parts" = $7, "metadata" = $8,
               "last_chunk" = $9, "updated_at" = $10, "size_bytes" = $11
             WHERE "task_id" = $1::text AND "artifact_id" = $2::text AND ${withinCaps}
             RETURNING 1`,
            values,
          )
        : await manager.query(
            `INSERT INTO "tasks"."artifacts" ("task_id", "artifact_id", "type", "fields", "name", "description", "parts", "metadata", "last_chunk",
               "created_at", "updated_at", "size_bytes", "position")
             SELECT $1::text, $2::text, $3::text, $4::jsonb, $5::text, $6::text, $7::jsonb, $8::jsonb, $9::boolean, $10::timestamptz, $10::timestamptz, $11::int,
               (SELECT COALESCE(MAX("position"), 0) + 1 FROM "tasks"."artifacts" WHERE "task_id" = $1::text)
             WHERE ${withinCaps}
             RETURNING 1`,
            values,
          );
      if (updatedRows(written).length === 0) {
        const held = await this.artifactsHeld(manager, taskId);
        throw artifactLimitError(existing ? { count: held.count - 1, bytes: held.bytes - Number(existing.size_bytes ?? 0) } : held, { count: 1, bytes: size });
      }
      changed.push({ artifact_id: artifactId, ...stored, append: false, last_chunk: values[8] as boolean });
    }
    return changed;
  }

  /** How many artifacts a task holds and their bytes (to say which cap a refused write met). */
  async artifactsHeld(manager: EntityManager, taskId: string): Promise<{ count: number; bytes: number }> {
    const [held]: Array<{ count: number; bytes: number }> = await manager.query(
      `SELECT count(*)::int AS "count", COALESCE(sum("size_bytes"), 0)::int AS "bytes" FROM "tasks"."artifacts" WHERE "task_id" = $1`,
      [taskId],
    );
    return held;
  }

  /** The sender's answer puts a task waiting for input back to accepted (its accepted_at stays). */
  async resume(manager: EntityManager, taskId: string, now: Date): Promise<TaskRow> {
    const [task] = updatedRows<TaskRow>(
      await manager.query(
        `UPDATE "tasks"."tasks" t SET "state" = 'accepted', "status_timestamp" = $2, "updated_at" = $2, "version" = t."version" + 1
         WHERE t."id" = $1 AND t."state" = 'input_required' RETURNING ${TASK_COLUMNS}`,
        [taskId, now],
      ),
    );
    return task;
  }

  async recordTransition(manager: EntityManager, entry: AuditEntry): Promise<void> {
    await manager.insert(AuditLogEntity, entry);
  }

  /** The message a stored idempotency key points at. */
  async messageAt(manager: EntityManager, taskId: string, sequenceNo: number): Promise<MessageRow> {
    const [message]: MessageRow[] = await manager.query(`SELECT * FROM "tasks"."messages" WHERE "task_id" = $1 AND "sequence_no" = $2`, [taskId, sequenceNo]);
    return message;
  }
}
