import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { TASK_LIMITS, type ArtifactInput, type PartView, type SendRequest } from '@app/contracts';
import { currentTraceParent } from '@app/tracing';
import { artifactBytes, artifactLimitError } from './artifact-limits';
import { messageBytes } from './message-budget';
import { taskEvent } from './task-events';
import { nextTaskId } from './task-ids';
import type { IdempotencyKey } from './send-idempotency';
import { firstText, type ArtifactRow, type MessageRow, type TaskRow } from './task-rows';

/** A new task with its first message and artifacts, as stored, built without reading it back. */
export interface NewTask {
  task: TaskRow;
  message: MessageRow;
  artifacts: ArtifactRow[];
}

/**
 * The whole create in one statement (one round trip, committed on its own): task, first
 * message, artifacts, audit row, idempotency keys and the `created` outbox event. Nothing is written when one of the sender's keys already
 * exists, or when the artifacts exceed a task's caps (count `$27`, bytes `$28`); two creates
 * racing on one key meet the keys' primary key and one of them fails whole.
 */
const CREATE_TASK_SQL = `
WITH known_key AS (
  SELECT 1 FROM "tasks"."idempotency_keys" k
  WHERE k."sender_id" = $3 AND (k."scope", k."key") IN (SELECT * FROM unnest($18::text[], $19::text[]))
), artifact_caps AS (
  SELECT count(*) <= $27::int AND COALESCE(sum(a."size_bytes"), 0) <= $28::int AS "within"
  FROM jsonb_to_recordset($21::jsonb) AS a("size_bytes" int)
), created_task AS (
  INSERT INTO "tasks"."tasks" ("id", "context_id", "sender_id", "sender_handle", "sender_name", "sender_role",
    "recipient_id", "recipient_handle", "recipient_name", "recipient_role", "state", "intent", "summary", "proposed_action",
    "metadata", "message_count", "created_at", "updated_at", "status_timestamp")
  SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', $11, $12, $13, $14, 1, $15, $15, $15
  WHERE NOT EXISTS (SELECT 1 FROM known_key) AND (SELECT "within" FROM artifact_caps)
  RETURNING "id"
), message AS (
  INSERT INTO "tasks"."messages" ("task_id", "sequence_no", "id", "author", "author_id", "from_handle", "body", "parts", "payload", "created_at", "size_bytes")
  SELECT t."id", 1, $16, 'sender', $3, $4, $12, $17, $20, $15, $26 FROM created_task t
  RETURNING "task_id"
), artifact AS (
  INSERT INTO "tasks"."artifacts" ("task_id", "artifact_id", "position", "type", "fields", "name", "description", "parts", "metadata",
    "last_chunk", "created_at", "updated_at", "size_bytes")
  SELECT t."id", a."artifact_id", a."position", a."type", a."fields", a."name", a."description", a."parts", a."metadata", a."last_chunk", $15, $15,
    a."size_bytes"
  FROM created_task t, jsonb_to_recordset($21::jsonb) AS a("artifact_id" text, "position" int, "type" text, "fields" jsonb, "name" text,
    "description" text, "parts" jsonb, "metadata" jsonb, "last_chunk" boolean, "size_bytes" int)
), audit AS (
  INSERT INTO "tasks"."audit_log" ("task_id", "actor_id", "transition", "from_state", "to_state", "at")
  SELECT t."id", $3, 'create', NULL, 'pending', $15 FROM created_task t
), idempotency AS (
  INSERT INTO "tasks"."idempotency_keys" ("sender_id", "scope", "key", "request_hash", "task_id", "sequence_no", "created_task")
  SELECT $3, k."scope", k."key", $22, m."task_id", 1, true FROM message m, unnest($18::text[], $19::text[]) AS k("scope", "key")
), outbox AS (
  INSERT INTO "tasks"."outbox_events" ("id", "subject", "type", "task_id", "payload", "created_at", "trace_parent")
  SELECT $23, $24, 'created', t."id", $25, $15, $29 FROM created_task t
)
SELECT (SELECT count(*) FROM created_task)::int AS "created", (SELECT "within" FROM artifact_caps) AS "within_artifact_caps"`;

/** Whether a create can go through the one-statement path (a new context, artifacts with distinct ids). */
export function creatableInOneStatement(request: SendRequest): boolean {
  if (request.task_id !== undefined || request.context_id !== undefined || request.recipient === undefined) return false;
  const ids = new Set<string>();
  for (const artifact of request.artifacts ?? []) {
    if (artifact.append || artifact.artifact_id === undefined) continue;
    if (ids.has(artifact.artifact_id)) return false;
    ids.add(artifact.artifact_id);
  }
  return true;
}

function artifactRows(taskId: string, artifacts: ArtifactInput[] | undefined, parts: (artifact: ArtifactInput) => PartView[]): ArtifactRow[] {
  return (artifacts ?? []).map((artifact, index) => ({
    task_id: taskId,
    artifact_id: artifact.artifact_id ?? randomUUID(),
    position: index + 1,
    type: artifact.type ?? null,
    fields: artifact.fields ?? {},
    name: artifact.name ?? null,
    description: artifact.description ?? null,
    parts: parts(artifact),
    metadata: artifact.metadata ?? {},
    last_chunk: artifact.append ? (artifact.last_chunk ?? false) : (artifact.last_chunk ?? true),
  }));
}

/**
 * Creates a task in one prepared statement. Returns null, having written nothing, when one of
 * `keys` was already used by this sender (the caller then replays or refuses through the keys);
 * refuses, having written nothing, artifacts past a task's caps.
 */
export async function createTaskInOneStatement(
  pool: pg.Pool,
  request: SendRequest,
  parts: PartView[],
  artifactParts: (artifact: ArtifactInput) => PartView[],
  keys: Array<Pick<IdempotencyKey, 'scope' | 'key'>>,
  requestHash: string,
): Promise<NewTask | null> {
  const sender = request.caller;
  const recipient = request.recipient as NonNullable<SendRequest['recipient']>;
  const now = new Date();
  const summary = firstText(parts);
  const task: TaskRow = {
    id: nextTaskId(),
    context_id: randomUUID(),
    sender_id: sender.id,
    sender_handle: sender.handle,
    sender_name: sender.name,
    sender_role: sender.role ?? null,
    recipient_id: recipient.id,
    recipient_handle: recipient.handle,
    recipient_name: recipient.name,
    recipient_role: recipient.role ?? null,
    state: 'pending',
    intent: request.intent ?? 'inform',
    summary,
    proposed_action: request.proposed_action ?? null,
    metadata: request.metadata ?? {},
    result_summary: null,
    reason: null,
    message_count: 1,
    version: 1,
    accepted_at: null,
    completed_at: null,
    cancelled_at: null,
    failed_at: null,
    rejected_at: null,
    created_at: now,
    updated_at: now,
    status_timestamp: now,
  };
  const message: MessageRow = {
    task_id: task.id,
    sequence_no: 1,
    id: request.message.message_id ?? randomUUID(),
    author: 'sender',
    author_id: sender.id,
    from_handle: sender.handle,
    body: summary,
    parts,
    payload: request.message.payload ?? {},
    created_at: now,
  };
  const artifacts = artifactRows(task.id, request.artifacts, artifactParts);
  const event = taskEvent('created', task, message, now);
  const partsJson = JSON.stringify(parts);
  const payloadJson = JSON.stringify(message.payload);
  const artifactsToStore = artifacts.map(({ task_id: _taskId, ...artifact }) => ({ ...artifact, size_bytes: artifactBytes(artifact) }));
  const result = await pool.query<{ created: number; within_artifact_caps: boolean }>({
    name: 'tasks-create-task',
    text: CREATE_TASK_SQL,
    values: [
      task.id,
      task.context_id,
      sender.id,
      sender.handle,
      sender.name,
      task.sender_role,
      recipient.id,
      recipient.handle,
      recipient.name,
      task.recipient_role,
      task.intent,
      summary,
      task.proposed_action ? JSON.stringify(task.proposed_action) : null,
      JSON.stringify(task.metadata),
      now,
      message.id,
      partsJson,
      keys.map((key) => key.scope),
      keys.map((key) => key.key),
      payloadJson,
      JSON.stringify(artifactsToStore),
      requestHash,
      event.id,
      event.subject,
      JSON.stringify(event.payload),
      messageBytes(summary, partsJson, payloadJson),
      TASK_LIMITS.artifactsPerTask,
      TASK_LIMITS.artifactBytesPerTask,
      currentTraceParent(),
    ],
  });
  const [row] = result.rows;
  if (row && !row.within_artifact_caps) {
    throw artifactLimitError(
      { count: 0, bytes: 0 },
      { count: artifacts.length, bytes: artifactsToStore.reduce((sum, artifact) => sum + artifact.size_bytes, 0) },
    );
  }
  return row?.created === 1 ? { task, message, artifacts } : null;
}
