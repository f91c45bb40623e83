import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { RelayError, type MessageInput, type PartView, type TaskView } from '@app/contracts';
import { messageFromJson, messagesWithinBudgetSql, type JsonMessage } from './message-budget';
import { TASK_COLUMNS, toTaskView, type ArtifactRow, type MessageRow, type TaskRow } from './task-rows';
import { unreadCountSql } from './sql/unread-count.sql';

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

/** Parts as plain JSON (class instances of the validated request become plain objects). */
export function plainParts(parts: MessageInput['parts']): PartView[] {
  return JSON.parse(JSON.stringify(parts)) as PartView[];
}

/**
 * The reads of an idempotent replay (send-idempotency.ts): the first send's task, message and
 * view again, on the caller's transaction. The writes keep their statements in sql/.
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
    const [{ unread }] = await manager.query(`SELECT ${unreadCountSql('$1', '$2')}::int AS "unread"`, [taskId, callerId]);
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

  /** The message a stored idempotency key points at. */
  async messageAt(manager: EntityManager, taskId: string, sequenceNo: number): Promise<MessageRow> {
    const [message]: MessageRow[] = await manager.query(`SELECT * FROM "tasks"."messages" WHERE "task_id" = $1 AND "sequence_no" = $2`, [taskId, sequenceNo]);
    return message;
  }
}
