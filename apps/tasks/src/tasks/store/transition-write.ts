import type pg from 'pg';
import { RelayError, type TaskState, type TransitionRequest } from '@app/contracts';
import { checkTransition, partyOf, STATE_TIMESTAMP_COLUMN, type TransitionRule } from '../rules/state-machine';
import { changeTask, type CommittedChange, type LoadedTask, type TaskChange } from './change-write';
import type { StoredBytesQuotas } from './stored-bytes';
import type { TaskRow } from './task-rows';

function stateChanged(rule: TransitionRule, expected: TaskState, state: TaskState | null): RelayError {
  const change = rule.to ? `from ${expected} to ${state ?? 'gone'}` : `to ${state ?? 'gone'}`;
  return new RelayError('state_changed', `Another caller changed the task ${change} first`, { expected_state: expected, state });
}

/** What the transition `request` makes of the task `current`, its rule checked on the task's state (it may refuse). */
export function transitionChange(
  current: TaskRow,
  request: TransitionRequest,
  rule = checkTransition(request.transition, request.cancel_mode, current.state, partyOf(current, request.caller_id, request.counterpart_id)),
): TaskChange {
  const ownEvent = rule.event ?? (request.message ? 'message_appended' : null);
  return {
    party: partyOf(current, request.caller_id, request.counterpart_id),
    callerId: request.caller_id,
    to: rule.to,
    stampColumn: rule.to ? STATE_TIMESTAMP_COLUMN[rule.to] : undefined,
    audit: { actorId: request.caller_id, transition: request.transition, sessionId: request.session_id ?? null, reason: request.reason ?? null },
    resultSummary: request.result_summary ?? null,
    message: request.message,
    artifacts: request.artifacts,
    events: ownEvent ? [ownEvent] : [],
  };
}

/**
 * A transition (accept, complete, cancel, decline, fail, request input) or a progress update as
 * a change of the task: the rule is checked on the state first read. Of two callers racing to
 * change the state, one wins and the other gets `state_changed`; a transition overtaken only by a
 * message or an artifact (or a progress update by a state it also applies to) goes through.
 */
export async function transitionTask(
  pool: pg.Pool | pg.PoolClient,
  request: TransitionRequest,
  quotas?: StoredBytesQuotas,
  known?: LoadedTask,
): Promise<CommittedChange> {
  let rule: TransitionRule | undefined;
  let firstState: TaskState | undefined;
  const decide = (current: TaskRow): TaskChange => {
    if (rule === undefined || firstState === undefined) {
      rule = checkTransition(request.transition, request.cancel_mode, current.state, partyOf(current, request.caller_id, request.counterpart_id));
      firstState = current.state;
    } else if (rule.to ? current.state !== firstState : !rule.from.includes(current.state)) {
      throw stateChanged(rule, firstState, current.state);
    }
    return transitionChange(current, request, rule);
  };
  return changeTask(pool, request.task_id, decide, (latest) => stateChanged(rule as TransitionRule, firstState as TaskState, latest.state), quotas, known);
}
