import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { orgOfHandle, RelayError, TASK_LIMITS, type ArtifactInput, type MessageInput, type TaskEventType, type TaskState } from '@app/contracts';
import { handoffTraceOf, handoffTraceParent } from '@app/tracing';
import { committedRows, type OutboxRow } from '../../outbox/committed-events';
import { applyArtifactInputs, artifactsJson, type ArtifactWrites, type StoredArtifact } from './artifact-writes';
import { messageBytes, messageFromJson, type JsonMessage } from './message-budget';
import type { IdempotencyKey } from './idempotency-key.entity';
import { CHANGE_HISTORY_SQL, changeStepsStatement, changeTaskStatement, LOAD_TASK_SQL } from './sql/change-task.sql';
import { checkStoredBytes, checksStoredBytes, storedBytesCharge, storedBytesShard, type StoredBytesCharge, type StoredBytesQuotas } from './stored-bytes';
import type { Party } from '../rules/state-machine';
import { taskEvent, type OutboxTaskEvent } from './task-events';
import { plainParts } from './task-repository';
import { firstText, type MessageRow, type TaskRow } from './task-rows';

/** What a use case makes of an existing task, as it decided on the task it read. */
export interface TaskChange {
  party: Party;
  /** Whose unread count the reply shows. */
  callerId: string;
  /** The new state (stamping `stampColumn`, with its audit row), or null to keep the state. */
  to: TaskState | null;
  stampColumn?: string;
  audit?: { actorId: string; transition: string; sessionId?: string | null; reason?: string | null };
  /** Kept on a state change (null or absent keeps the task's own). */
  resultSummary?: string | null;
  message?: MessageInput;
  artifacts?: ArtifactInput[];
  /** The sender's idempotency keys of an append, pointing at its message. */
  keys?: { senderId: string; keys: Array<Pick<IdempotencyKey, 'scope' | 'key'>>; requestHash: string };
  /** The change's own events, after its artifacts' ones, as the task and message will be stored. */
  events: Array<TaskEventType>;
}

/** A change as it was committed, with what the caller's reply shows of the task, and the events to publish. */
export interface CommittedChange {
  task: TaskRow;
  message: MessageRow | null;
  artifacts: StoredArtifact[];
  unread: number;
  events: OutboxRow[];
}

/** How often a change is tried again when the task changed under it in a way its use case allows (each time, another change of the task has won). */
const MAX_ATTEMPTS = 32;

export type LoadedTask = TaskRow & { artifacts: StoredArtifact[] };

/** The task with its artifacts, or `thread_not_found`. */
export async function loadTask(pool: pg.Pool | pg.PoolClient, taskId: string): Promise<LoadedTask> {
  const { rows } = await pool.query<LoadedTask>({ name: 'tasks-load-task', text: LOAD_TASK_SQL, values: [taskId.toUpperCase()] });
  if (!rows[0]) throw new RelayError('thread_not_found', `No task with id ${taskId}`, { task_id: taskId });
  return rows[0];
}

/** A change decided on a task as read: the task as it will be, and what the change writes. */
export interface PlannedChange {
  task: TaskRow;
  message: MessageRow | null;
  writes: ArtifactWrites;
  /** Its artifacts' events, then its own, as the task and message will be stored. */
  events: OutboxTaskEvent[];
  partsJson: string;
  payloadJson: string;
  /** The message's stored size (0 without one). */
  messageBytes: number;
}

/**
 * What `change` makes of the task `current` (with its artifacts `held`) at `now`, checked against
 * the task's message cap and artifact caps: nothing is written here.
 */
export function planChange(current: TaskRow, held: StoredArtifact[], change: TaskChange, now: Date): PlannedChange {
  if (change.message && current.message_count >= TASK_LIMITS.messagesPerTask) {
    throw new RelayError('thread_message_limit', `The task holds the maximum of ${TASK_LIMITS.messagesPerTask} messages`, {
      limit: TASK_LIMITS.messagesPerTask,
    });
  }
  const writes = applyArtifactInputs(current.id, held, change.artifacts, 'each');
  const task: TaskRow = {
    ...current,
    ...(change.to
      ? {
          state: change.to,
          status_timestamp: now,
          result_summary: change.resultSummary ?? current.result_summary,
          reason: change.audit?.reason ?? current.reason,
          ...(change.stampColumn ? { [change.stampColumn]: now } : {}),
        }
      : {}),
    message_count: current.message_count + (change.message ? 1 : 0),
    version: current.version + 1,
    updated_at: now,
  };
  let message: MessageRow | null = null;
  if (change.message) {
    const parts = plainParts(change.message.parts);
    message = {
      task_id: task.id,
      sequence_no: task.message_count,
      id: change.message.message_id ?? randomUUID(),
      author: change.party,
      author_id: change.party === 'sender' ? task.sender_id : task.recipient_id,
      from_handle: change.party === 'sender' ? task.sender_handle : task.recipient_handle,
      body: firstText(parts),
      parts,
      payload: change.message.payload ?? {},
      created_at: now,
    };
  }
  const events: OutboxTaskEvent[] = [
    ...writes.events.map((artifact) => taskEvent('artifact_updated', task, null, now, artifact)),
    ...change.events.map((type) => taskEvent(type, task, message, now)),
  ];
  const partsJson = JSON.stringify(message?.parts ?? []);
  const payloadJson = JSON.stringify(message?.payload ?? {});
  const sizeOfMessage = message ? messageBytes(message.body, partsJson, payloadJson) : 0;
  return { task, message, writes, events, partsJson, payloadJson, messageBytes: sizeOfMessage };
}

/**
 * The one write of a change to an existing task (an append, a transition, a progress update):
 * the task and its artifacts are read, `decide` checks its use case's rules on them (it may
 * refuse) and says what changes, the message cap and artifact caps are checked, then one statement
 * writes it all on the condition that the task is still as read. When the task changed in
 * between, it is read and decided again (`decide` refuses what its use case does not allow, such
 * as another state), at most MAX_ATTEMPTS times, and then `overtaken` names the refusal. The
 * bytes it stores count to its writer's org (docs/orgs.md#quotas); with `quotas`, a write that
 * would take an org with a stored-bytes quota past it is refused, having written nothing.
 */
export async function changeTask(
  pool: pg.Pool | pg.PoolClient,
  taskId: string,
  decide: (current: TaskRow, attempt: number) => TaskChange,
  overtaken: (latest: TaskRow) => RelayError,
  quotas?: StoredBytesQuotas,
  known?: LoadedTask,
): Promise<CommittedChange> {
  for (let attempt = 1; ; attempt++) {
    // A task the caller read already (in its transaction) spares the first read; the write's condition on its version catches a stale one.
    const { artifacts: held, ...current } = attempt === 1 && known ? known : await loadTask(pool, taskId);
    const change = decide(current, attempt);
    const now = new Date();
    const { task, message, writes, events, partsJson, payloadJson, messageBytes: sizeOfMessage } = planChange(current, held, change, now);
    const added = sizeOfMessage + artifactBytesOf(writes.artifacts) - artifactBytesOf(held);
    const writer = change.party === 'sender' ? current.sender_handle : current.recipient_handle;
    const charge = await storedBytesCharge(quotas, orgOfHandle(writer), added);
    const keys = change.keys?.keys ?? [];
    const traceParent = handoffTraceParent(handoffTraceOf(current));
    const shape = {
      stampColumn: change.to ? change.stampColumn : undefined,
      stateChange: change.to !== null,
      message: message !== null,
      artifacts: writes.written.length > 0,
      keys: message !== null && keys.length > 0,
      storedBytes: added !== 0,
    };
    const changed = await runChange(
      pool,
      charge,
      quotas,
      changeTaskStatement(shape, {
        taskId: current.id,
        expectedState: current.state,
        expectedVersion: current.version,
        state: task.state,
        now,
        resultSummary: change.resultSummary ?? null,
        reason: change.audit?.reason ?? null,
        callerId: change.callerId,
        actorId: change.audit?.actorId ?? null,
        transition: change.audit?.transition ?? null,
        sessionId: change.audit?.sessionId ?? null,
        messageId: message?.id ?? null,
        author: message?.author ?? null,
        authorId: message?.author_id ?? null,
        fromHandle: message?.from_handle ?? null,
        body: message?.body ?? null,
        parts: partsJson,
        payload: payloadJson,
        messageBytes: sizeOfMessage,
        artifacts: artifactsJson(writes.written),
        events: JSON.stringify(events.map(({ id, subject, type, payload }) => ({ id, subject, type, payload }))),
        traceParent,
        senderId: change.keys?.senderId ?? null,
        scopes: keys.map((key) => key.scope),
        keys: keys.map((key) => key.key),
        requestHash: change.keys?.requestHash ?? null,
        writerOrg: charge.org,
        shard: storedBytesShard(current.id),
        storedBytes: added,
        senderBytes: change.party === 'sender' ? added : 0,
        recipientBytes: change.party === 'sender' ? 0 : added,
      }),
    );
    if (changed) {
      const { unread, earlier_events: earlier, event_positions: positions, ...stored } = changed;
      const committed = committedRows(stored.id, earlier, events, positions, traceParent);
      return { task: stored, message, artifacts: writes.artifacts, unread, events: committed };
    }
    if (attempt >= MAX_ATTEMPTS) throw overtaken(await loadTask(pool, taskId));
  }
}

/** What becomes of a step its use case refuses on the task as the steps before it leave it. */
export type RefusedStep = 'skip' | 'end';

/** Changes of one task written together, with the state they leave it in and the events to publish. */
export interface CommittedSteps {
  task: TaskRow;
  events: OutboxRow[];
  /** A step was refused as `end`: it and the steps after it were left out. */
  ended: boolean;
}

/**
 * Several changes of one task in one write (an upstream agent's answer: its accept, its messages
 * and artifacts, its end): each step is decided by its use case's rules on the task as the steps
 * before it leave it, and all of them are written in one statement on the condition that the task
 * is still as read; when it changed in between, it is read and the steps decided again (at most
 * MAX_ATTEMPTS times, then `overtaken`). A step refused is left out (`skip`) or ends the steps
 * (`end`) as `refused` says of its error; undefined throws it, and nothing is written. The bytes
 * of all the steps count to the org of the first one's writer, checked as `changeTask` checks them.
 */
export async function changeTaskInSteps(
  pool: pg.Pool | pg.PoolClient,
  taskId: string,
  steps: Array<(current: TaskRow) => TaskChange>,
  refused: (error: unknown) => RefusedStep | undefined,
  overtaken: (latest: TaskRow) => RelayError,
  quotas?: StoredBytesQuotas,
  known?: LoadedTask,
): Promise<CommittedSteps> {
  for (let attempt = 1; ; attempt++) {
    const { artifacts: held, ...read } = attempt === 1 && known ? known : await loadTask(pool, taskId);
    const now = new Date();
    const planned: Array<{ change: TaskChange; before: TaskRow; plan: PlannedChange }> = [];
    let current: TaskRow = read;
    let artifacts = held;
    let ended = false;
    for (const decide of steps) {
      let change: TaskChange;
      let plan: PlannedChange;
      try {
        change = decide(current);
        plan = planChange(current, artifacts, change, now);
      } catch (error) {
        const outcome = refused(error);
        if (outcome === undefined) throw error;
        if (outcome === 'end') {
          ended = true;
          break;
        }
        continue;
      }
      planned.push({ change, before: current, plan });
      current = plan.task;
      artifacts = plan.writes.artifacts;
    }
    if (planned.length === 0) return { task: read, events: [], ended };
    const written = new Set(planned.flatMap(({ plan }) => plan.writes.written.map((artifact) => artifact.artifact_id)));
    const messageBytesOf = (party: 'sender' | 'recipient'): number =>
      planned.reduce((sum, { change, plan }) => sum + (change.party === party ? plan.messageBytes : 0), 0);
    // Artifacts are counted to the party that wrote them last; the messages to their authors.
    const artifactBytes = artifactBytesOf(artifacts) - artifactBytesOf(held);
    const lastWriter = planned[planned.length - 1].change.party;
    const senderBytes = messageBytesOf('sender') + (lastWriter === 'sender' ? artifactBytes : 0);
    const recipientBytes = messageBytesOf('recipient') + (lastWriter === 'recipient' ? artifactBytes : 0);
    const added = senderBytes + recipientBytes;
    const firstWriter = planned[0].change.party === 'sender' ? read.sender_handle : read.recipient_handle;
    const charge = await storedBytesCharge(quotas, orgOfHandle(firstWriter), added);
    const messages = planned.flatMap(({ plan }) => (plan.message ? [{ message: plan.message, plan }] : []));
    const keys = planned.flatMap(({ change: { keys: given }, plan: { message } }) =>
      message && given
        ? given.keys.map(({ scope, key }) => ({ sender_id: given.senderId, scope, key, request_hash: given.requestHash, sequence_no: message.sequence_no }))
        : [],
    );
    const moves = planned.filter(({ change }) => change.to !== null);
    const events = planned.flatMap(({ plan }) => plan.events);
    const traceParent = handoffTraceParent(handoffTraceOf(read));
    const changed = await runChange(
      pool,
      charge,
      quotas,
      changeStepsStatement(
        {
          stampColumns: moves
            .flatMap(({ change }) => (change.stampColumn ? [change.stampColumn] : []))
            .filter((column, index, all) => all.indexOf(column) === index),
          stateChange: moves.length > 0,
          messages: messages.length > 0,
          artifacts: written.size > 0,
          keys: keys.length > 0,
          storedBytes: added !== 0,
        },
        {
          taskId: read.id,
          expectedState: read.state,
          expectedVersion: read.version,
          state: current.state,
          now,
          resultSummary: current.result_summary,
          reason: current.reason,
          messagesAdded: messages.length,
          callerId: planned[planned.length - 1].change.callerId,
          messages: JSON.stringify(
            messages.map(({ message, plan }) => ({
              sequence_no: message.sequence_no,
              id: message.id,
              author: message.author,
              author_id: message.author_id,
              from_handle: message.from_handle,
              body: message.body,
              parts: message.parts,
              payload: message.payload,
              size_bytes: plan.messageBytes,
            })),
          ),
          keys: JSON.stringify(keys),
          audits: JSON.stringify(
            moves.map(({ change, before, plan }) => ({
              actor_id: change.audit?.actorId ?? null,
              transition: change.audit?.transition ?? null,
              from_state: before.state,
              to_state: plan.task.state,
              session_id: change.audit?.sessionId ?? null,
              reason: change.audit?.reason ?? null,
            })),
          ),
          artifacts: artifactsJson(artifacts.filter((artifact) => written.has(artifact.artifact_id))),
          events: JSON.stringify(events.map(({ id, subject, type, payload }) => ({ id, subject, type, payload }))),
          traceParent,
          writerOrg: charge.org,
          shard: storedBytesShard(read.id),
          storedBytes: added,
          senderBytes,
          recipientBytes,
        },
      ),
    );
    if (changed) {
      const { unread: _unread, earlier_events: earlier, event_positions: positions, ...stored } = changed;
      return { task: stored, events: committedRows(stored.id, earlier, events, positions, traceParent), ended };
    }
    if (attempt >= MAX_ATTEMPTS) throw overtaken(await loadTask(pool, taskId));
  }
}

type ChangedRow = TaskRow & { unread: number; earlier_events: OutboxRow[]; event_positions: Record<string, string> };

function artifactBytesOf(artifacts: StoredArtifact[]): number {
  return artifacts.reduce((sum, artifact) => sum + Number(artifact.size_bytes), 0);
}

/**
 * Runs a change statement; undefined when the task changed since it was read. A change that
 * checks its org's stored-bytes quota runs behind the org's lock: in the caller's transaction
 * when given a client (which is then in one), else in a transaction of its own.
 */
async function runChange(
  pool: pg.Pool | pg.PoolClient,
  charge: StoredBytesCharge,
  quotas: StoredBytesQuotas | undefined,
  statement: pg.QueryConfig,
): Promise<ChangedRow | undefined> {
  if (!quotas || !checksStoredBytes(charge)) return (await pool.query<ChangedRow>(statement)).rows[0];
  if ('release' in pool) {
    await checkStoredBytes(pool, charge, quotas);
    return (await pool.query<ChangedRow>(statement)).rows[0];
  }
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await checkStoredBytes(client, charge, quotas);
    const changed = (await client.query<ChangedRow>(statement)).rows[0];
    await client.query(changed ? 'COMMIT' : 'ROLLBACK');
    return changed;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** The newest `historyLength` messages of a task (all when undefined) within a reply's byte budget. */
export async function changeHistory(pool: pg.Pool, task: TaskRow, historyLength: number | undefined): Promise<MessageRow[]> {
  if (historyLength === 0) return [];
  const after = historyLength === undefined ? 0 : Math.max(0, task.message_count - historyLength);
  const { rows } = await pool.query<{ messages: JsonMessage[] }>({ name: 'tasks-change-history', text: CHANGE_HISTORY_SQL, values: [task.id, after] });
  return rows[0].messages.map(messageFromJson);
}
