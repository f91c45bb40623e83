import type pg from 'pg';
import { RelayError, type GetRequest } from '@app/contracts';
import { messageFromJson, type JsonMessage } from './message-budget';
import { READ_TASK_SQL } from './sql/read-task.sql';
import { partyOf } from '../rules/state-machine';
import type { ArtifactRow, MessageRow, TaskRow } from './task-rows';

/** A task as one participant reads it: the row, that participant's unread count, messages and artifacts. */
export interface TaskRead {
  task: TaskRow;
  unread: number;
  messages: MessageRow[];
  artifacts: ArtifactRow[];
}

/**
 * The task for one of its participants (on an endpoint, `counterpart_id`: only between the caller
 * and that agent); `thread_not_found` or `not_a_participant` otherwise (nothing marked read).
 */
export async function readTask(pool: pg.Pool, request: GetRequest): Promise<TaskRead> {
  const { rows } = await pool.query<
    TaskRow & { party: string | null; on_endpoint: boolean; unread: number; messages: JsonMessage[]; artifacts: ArtifactRow[] }
  >({
    name: 'tasks-read-task',
    text: READ_TASK_SQL,
    values: [
      request.task_id.toUpperCase(),
      request.caller_id,
      request.history_length ?? null,
      request.after_sequence_no ?? 0,
      request.mark_read !== false,
      request.after_sequence_no !== undefined,
      request.counterpart_id ?? null,
    ],
  });
  const [row] = rows;
  if (!row) throw new RelayError('thread_not_found', `No task with id ${request.task_id}`, { task_id: request.task_id });
  partyOf(row, request.caller_id, request.counterpart_id);
  const { party: _party, on_endpoint: _onEndpoint, unread, messages, artifacts, ...task } = row;
  return {
    task,
    unread,
    messages: messages.map(messageFromJson),
    artifacts,
  };
}
