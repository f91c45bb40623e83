import type pg from 'pg';
import { RelayError } from '@app/contracts';
import { loadTask, type LoadedTask } from '../tasks/store/change-write';

/** A task as the approvers' commands read it: an unknown id is `task_not_found` (the admin API's word), not an agent's `thread_not_found`. */
export async function taskForPeople(pool: pg.Pool, taskId: string): Promise<LoadedTask> {
  try {
    return await loadTask(pool, taskId);
  } catch (error) {
    if (error instanceof RelayError && error.reason === 'thread_not_found')
      throw new RelayError('task_not_found', `No task with id ${taskId}`, { task_id: taskId });
    throw error;
  }
}
