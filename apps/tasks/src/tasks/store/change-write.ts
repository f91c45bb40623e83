import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { orgOfHandle, RelayError, TASK_LIMITS, type ArtifactInput, type MessageInput, type TaskEventType, type TaskState } from '@app/contracts';
import { handoffTraceOf, handoffTraceParent } from '@app/tracing';
import { committedRows, type OutboxRow } from '../../outbox/committed-events';
import { applyArtifactInputs, artifactsJson, type StoredArtifact } from './artifact-writes';
import { messageBytes, messageFromJson, type JsonMessage } from './message-budget';
import type { IdempotencyKey } from './idempotency-key.entity';
import { CHANGE_HISTORY_SQL, changeTaskStatement, LOAD_TASK_SQL } from './sql/change-task.sql';
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
    if (change.message && current.message_count >= TASK_LIMITS.messagesPerTask) {
      throw new RelayError('thread_message_limit', `The task holds the maximum of ${TASK_LIMITS.messagesPerTask} messages`, {
        limit: TASK_LIMITS.messagesPerTask,
      });
    }
    const writes = applyArtifactInputs(current.id, held, change.artifacts, 'each');
    const now = new Date();
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
