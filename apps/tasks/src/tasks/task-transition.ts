import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { RelayError, TASK_LIMITS, type TaskState, type TransitionRequest } from '@app/contracts';
import { currentTraceParent } from '@app/tracing';
import { applyArtifactInputs, artifactsJson, type StoredArtifact } from './artifact-writes';
import { messageBytes, messageFromJson, type JsonMessage } from './message-budget';
import { LOAD_TASK_SQL, TRANSITION_HISTORY_SQL, transitionSql } from './sql/transition-task.sql';
import { checkTransition, partyOf, STATE_TIMESTAMP_COLUMN, type TransitionRule } from './state-machine';
import { taskEvent, type OutboxTaskEvent } from './task-events';
import { plainParts } from './task-repository';
import { firstText, type ArtifactRow, type MessageRow, type TaskRow } from './task-rows';

/** A transition as it was committed, with what the caller's reply shows of the task. */
export interface CommittedTransition {
  task: TaskRow;
  message: MessageRow | null;
  artifacts: ArtifactRow[];
  unread: number;
}

/** How often a transition is tried again when only the task's messages or artifacts changed under it. */
const MAX_ATTEMPTS = 10;

type LoadedTask = TaskRow & { artifacts: StoredArtifact[] };

async function loadTask(pool: pg.Pool, request: TransitionRequest): Promise<LoadedTask> {
  const { rows } = await pool.query<LoadedTask>({ name: 'tasks-load-task', text: LOAD_TASK_SQL, values: [request.task_id.toUpperCase()] });
  if (!rows[0]) throw new RelayError('thread_not_found', `No task with id ${request.task_id}`, { task_id: request.task_id });
  return rows[0];
}

function stateChanged(rule: TransitionRule, expected: TaskState, state: TaskState): RelayError {
  const first = rule.to ? `from ${expected} to ${state}` : `to ${state}`;
  return new RelayError('state_changed', `Another caller changed the task ${first} first`, { expected_state: expected, state });
}

/**
 * The one write of a transition (accept, complete, cancel, decline, fail, request input) or a
 * progress update: the task and its artifacts are read, the rule, the message cap and the
 * artifact caps are checked on them, then one statement writes it all on the condition that
 * the task is still as read. Of two callers racing to change the state, one wins and the other
 * gets `state_changed`; a transition overtaken only by a message or an artifact is tried again.
 */
export async function transitionTask(pool: pg.Pool, request: TransitionRequest): Promise<CommittedTransition> {
  let rule: TransitionRule | undefined;
  let firstState: TaskState | undefined;
  for (let attempt = 1; ; attempt++) {
    const { artifacts: held, ...current } = await loadTask(pool, request);
    const party = partyOf(current, request.caller_id, request.counterpart_id);
    if (rule === undefined || firstState === undefined) {
      rule = checkTransition(request.transition, request.cancel_mode, current.state, party);
      firstState = current.state;
    } else if (rule.to ? current.state !== firstState : !rule.from.includes(current.state)) {
      throw stateChanged(rule, firstState, current.state);
    }
    if (request.message && current.message_count >= TASK_LIMITS.messagesPerTask) {
      throw new RelayError('thread_message_limit', `The task holds the maximum of ${TASK_LIMITS.messagesPerTask} messages`, {
        limit: TASK_LIMITS.messagesPerTask,
      });
    }
    const writes = applyArtifactInputs(current.id, held, request.artifacts, 'each');
    const now = new Date();
    const stampColumn = rule.to ? STATE_TIMESTAMP_COLUMN[rule.to] : undefined;
    const task: TaskRow = {
      ...current,
      ...(rule.to
        ? {
            state: rule.to,
            status_timestamp: now,
            result_summary: request.result_summary ?? current.result_summary,
            reason: request.reason ?? current.reason,
            ...(stampColumn ? { [stampColumn]: now } : {}),
          }
        : {}),
      message_count: current.message_count + (request.message ? 1 : 0),
      version: current.version + 1,
      updated_at: now,
    };
    let message: MessageRow | null = null;
    if (request.message) {
      const parts = plainParts(request.message.parts);
      message = {
        task_id: task.id,
        sequence_no: task.message_count,
        id: request.message.message_id ?? randomUUID(),
        author: party,
        author_id: party === 'sender' ? task.sender_id : task.recipient_id,
        from_handle: party === 'sender' ? task.sender_handle : task.recipient_handle,
        body: firstText(parts),
        parts,
        payload: request.message.payload ?? {},
        created_at: now,
      };
    }
    const events: OutboxTaskEvent[] = writes.events.map((artifact) => taskEvent('artifact_updated', task, null, now, artifact));
    if (rule.event) events.push(taskEvent(rule.event, task, message, now));
    else if (message) events.push(taskEvent('message_appended', task, message, now));
    const partsJson = JSON.stringify(message?.parts ?? []);
    const payloadJson = JSON.stringify(message?.payload ?? {});
    const { rows } = await pool.query<TaskRow & { unread: number }>({
      name: `tasks-transition-${stampColumn ?? 'none'}`,
      text: transitionSql(stampColumn),
      values: [
        current.id,
        current.state,
        current.version,
        task.state,
        now,
        request.result_summary ?? null,
        request.reason ?? null,
        rule.to !== null,
        request.caller_id,
        request.transition,
        request.session_id ?? null,
        message !== null,
        message?.id ?? null,
        message?.author ?? null,
        message?.author_id ?? null,
        message?.from_handle ?? null,
        message?.body ?? null,
        partsJson,
        payloadJson,
        message ? messageBytes(message.body, partsJson, payloadJson) : 0,
        artifactsJson(writes.written),
        JSON.stringify(events.map(({ id, subject, type, payload }) => ({ id, subject, type, payload }))),
        currentTraceParent(),
      ],
    });
    const changed = rows[0];
    if (changed) {
      const { unread, ...stored } = changed;
      return { task: stored, message, artifacts: writes.artifacts, unread };
    }
    if (attempt >= MAX_ATTEMPTS) {
      const latest = await loadTask(pool, request);
      throw stateChanged(rule, firstState, latest.state);
    }
  }
}

/** The newest `historyLength` messages of a task (all when undefined) within a reply's byte budget. */
export async function transitionHistory(pool: pg.Pool, task: TaskRow, historyLength: number | undefined): Promise<MessageRow[]> {
  if (historyLength === 0) return [];
  const after = historyLength === undefined ? 0 : Math.max(0, task.message_count - historyLength);
  const { rows } = await pool.query<{ messages: JsonMessage[] }>({ name: 'tasks-transition-history', text: TRANSITION_HISTORY_SQL, values: [task.id, after] });
  return rows[0].messages.map(messageFromJson);
}
