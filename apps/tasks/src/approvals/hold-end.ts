import type pg from 'pg';
import { AGENT_LIMITS, RelayError, type TaskHold } from '@app/contracts';
import { handoffTraceOf, handoffTraceParent } from '@app/tracing';
import { committedRows, type OutboxRow } from '../outbox/committed-events';
import { loadTask, type LoadedTask } from '../tasks/store/change-write';
import { taskForPeople } from './task-for-people';
import { taskEvent } from '../tasks/store/task-events';
import type { MessageRow, TaskRow } from '../tasks/store/task-rows';
import { END_HOLD_SQL, FIRST_MESSAGE_SQL } from './hold-end.sql';

/** How a hold ends: a person approves or denies it, or the relay lets it expire. */
export type HoldEnd =
  { kind: 'approve'; decidedBy: string; comment: string | null } | { kind: 'deny'; decidedBy: string; comment: string | null } | { kind: 'expire' };

const OUTCOME = { approve: 'approved', deny: 'denied', expire: 'expired' } as const;
const TRANSITION = { approve: 'approve', deny: 'deny', expire: 'expire' } as const;

/** The reason a rejected (denied or expired) handoff tells its sender. */
export function holdEndReason(end: HoldEnd, hold: TaskHold): string | null {
  if (end.kind === 'approve') return null;
  if (end.kind === 'deny') return end.comment ? `Denied by an approver: ${end.comment}` : 'Denied by an approver';
  return `Not approved before the hold expired at ${hold.expires_at} (rule "${hold.rule}")`;
}

/**
 * Ends the hold of a held task (docs/decisions/0024-held-handoffs.md). Approved, the task becomes
 * pending and its recipient is told as if it had just been sent (the `created` event: inbox,
 * stream, webhook, once); denied or expired, it is rejected with the reason and only the sender is
 * told. A task not held is `not_held`; an approval or denial after the deadline is `not_held` too
 * (the sweep expires it); a change that lost a race is `state_changed`, and nothing is written.
 */
export async function endHold(
  pool: pg.Pool,
  taskId: string,
  end: HoldEnd,
  now = new Date(),
): Promise<{ task: TaskRow; artifacts: LoadedTask['artifacts']; events: OutboxRow[] }> {
  const { artifacts, ...current } = await taskForPeople(pool, taskId);
  const hold = current.hold;
  if (current.state !== 'held' || !hold) {
    throw new RelayError('not_held', `Task ${current.id} is not held for approval (it is ${current.state})`, {
      task_id: current.id,
      state: current.state,
      hold,
    });
  }
  const expired = current.hold_expires_at !== null && current.hold_expires_at.getTime() <= now.getTime();
  if (end.kind !== 'expire' && expired) {
    throw new RelayError('not_held', `The hold of task ${current.id} expired at ${hold.expires_at}; it is being rejected`, {
      task_id: current.id,
      state: current.state,
      hold,
    });
  }
  if (end.kind === 'expire' && !expired) throw new RelayError('not_held', `The hold of task ${current.id} has not expired`, { task_id: current.id });
  const approved = end.kind === 'approve';
  const reason = holdEndReason(end, hold);
  const comment = end.kind === 'expire' ? null : end.comment;
  const nextHold: TaskHold = { ...hold, outcome: OUTCOME[end.kind], decided_at: now.toISOString(), comment };
  const task: TaskRow = {
    ...current,
    state: approved ? 'pending' : 'rejected',
    status_timestamp: now,
    updated_at: now,
    version: current.version + 1,
    hidden_from_recipient: !approved,
    hold: nextHold,
    rejected_at: approved ? current.rejected_at : now,
    reason: reason ?? current.reason,
  };
  let first: MessageRow | null = null;
  if (approved) {
    const { rows } = await pool.query<MessageRow>({ name: 'tasks-hold-first-message', text: FIRST_MESSAGE_SQL, values: [current.id] });
    first = rows[0] ?? null;
  }
  const events = [taskEvent(approved ? 'created' : 'rejected', task, first, now)];
  const actor = end.kind === 'expire' ? 'relay' : end.decidedBy.slice(0, AGENT_LIMITS.idChars);
  const traceParent = handoffTraceParent(handoffTraceOf(current));
  const { rows } = await pool.query<TaskRow & { earlier_events: OutboxRow[]; event_positions: Record<string, string> }>({
    name: 'tasks-end-hold',
    text: END_HOLD_SQL,
    values: [
      current.id,
      task.state,
      now,
      task.hidden_from_recipient,
      JSON.stringify(nextHold),
      reason,
      current.version,
      actor,
      TRANSITION[end.kind],
      comment ?? reason,
      traceParent,
      JSON.stringify(events.map(({ id, subject, type, payload }) => ({ id, subject, type, payload }))),
    ],
  });
  if (!rows[0]) {
    const latest = await loadTask(pool, current.id);
    throw new RelayError('state_changed', `Another change of task ${current.id} came first (it is ${latest.state})`, {
      task_id: current.id,
      state: latest.state,
    });
  }
  const { earlier_events: earlier, event_positions: positions, ...ended } = rows[0];
  return { task: ended, artifacts, events: committedRows(ended.id, earlier, events, positions, traceParent) };
}
