import type pg from 'pg';
import { RelayError, type TransitionRequest } from '@app/contracts';
import { currentTraceParent } from '@app/tracing';
import { checkTransition, partyOf, STATE_TIMESTAMP_COLUMN } from './state-machine';
import { taskEvent } from './task-events';
import { changeStateSql, LOAD_TASK_SQL } from './sql/transition-task.sql';
import type { ArtifactRow, TaskRow } from './task-rows';

/** A state change as it was committed, with what the caller's reply shows of the task. */
export interface CommittedTransition {
  task: TaskRow;
  artifacts: ArtifactRow[];
  unread: number;
}

/** Whether a transition can take this path: a state change with no message or artifacts, answered without history. */
export function transitionableInOneStatement(request: TransitionRequest): boolean {
  return request.transition !== 'progress' && !request.message && !(request.artifacts && request.artifacts.length > 0) && request.history_length === 0;
}

/**
 * A state change in two round trips and no explicit transaction: the task is read, the rule is
 * checked against its state and the caller's party, then one statement changes it on the
 * condition that the state is still the one read (else `state_changed`, nothing written).
 */
export async function transitionInOneStatement(pool: pg.Pool, request: TransitionRequest): Promise<CommittedTransition> {
  const taskId = request.task_id.toUpperCase();
  const { rows: found } = await pool.query<TaskRow>({ name: 'tasks-load-task', text: LOAD_TASK_SQL, values: [taskId] });
  const current = found[0];
  if (!current) throw new RelayError('thread_not_found', `No task with id ${request.task_id}`, { task_id: request.task_id });
  const party = partyOf(current, request.caller_id, request.counterpart_id);
  const rule = checkTransition(request.transition, request.cancel_mode, current.state, party);
  const to = rule.to as NonNullable<typeof rule.to>;
  const now = new Date();
  const stampColumn = STATE_TIMESTAMP_COLUMN[to];
  const expected: TaskRow = {
    ...current,
    state: to,
    result_summary: request.result_summary ?? current.result_summary,
    reason: request.reason ?? current.reason,
    version: current.version + 1,
    updated_at: now,
    status_timestamp: now,
    ...(stampColumn ? { [stampColumn]: now } : {}),
  };
  const event = taskEvent(rule.event as NonNullable<typeof rule.event>, expected, null, now);
  const { rows } = await pool.query<TaskRow & { artifacts: ArtifactRow[]; unread: number }>({
    name: `tasks-transition-${stampColumn ?? 'none'}`,
    text: changeStateSql(stampColumn),
    values: [
      current.id,
      current.state,
      to,
      now,
      request.result_summary ?? null,
      request.reason ?? null,
      request.caller_id,
      request.transition,
      request.session_id ?? null,
      event.id,
      event.subject,
      event.type,
      JSON.stringify(event.payload),
      currentTraceParent(),
    ],
  });
  const changed = rows[0];
  if (!changed) {
    const { rows: latest } = await pool.query<TaskRow>({ name: 'tasks-load-task', text: LOAD_TASK_SQL, values: [taskId] });
    throw new RelayError('state_changed', `Another caller changed the task from ${current.state} to ${latest[0]?.state ?? 'gone'} first`, {
      expected_state: current.state,
      state: latest[0]?.state ?? null,
    });
  }
  const { artifacts, unread, ...task } = changed;
  return { task, artifacts, unread };
}
