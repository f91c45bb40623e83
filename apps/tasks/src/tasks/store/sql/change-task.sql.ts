import { earlierUnpublishedSql, OWN_POSITIONS_SQL } from '../../../outbox/committed-events';
import { messagesWithinBudgetSql } from '../message-budget';
import { addStoredBytesSql } from '../stored-bytes';
import { TASK_COLUMNS } from '../task-rows';
import { unreadCountSql } from './unread-count.sql';

/** The statements of a change to an existing task, an append or a transition (change-write.ts), and nothing else's. */

/** The task with its artifacts (by position), as a change's rules and artifact caps are checked on them. */
export const LOAD_TASK_SQL = `SELECT ${TASK_COLUMNS},
  (SELECT COALESCE(json_agg(a ORDER BY a."position"), '[]'::json) FROM "tasks"."artifacts" a WHERE a."task_id" = t."id") AS "artifacts"
FROM "tasks"."tasks" t WHERE t."id" = $1`;

/**
 * The task as LOAD_TASK_SQL reads it, and which of the message ids `$2` it holds as its
 * recipient's: what an upstream report (its answers, some perhaps reported before) starts from.
 */
export const LOAD_TASK_FOR_REPORT_SQL = `SELECT ${TASK_COLUMNS},
  (SELECT COALESCE(json_agg(a ORDER BY a."position"), '[]'::json) FROM "tasks"."artifacts" a WHERE a."task_id" = t."id") AS "artifacts",
  ARRAY(SELECT m."id" FROM "tasks"."messages" m WHERE m."task_id" = t."id" AND m."id" = ANY($2::text[]) AND m."author" = 'recipient') AS "held_message_ids"
FROM "tasks"."tasks" t WHERE t."id" = $1`;

/** What a change writes besides the task's row; each part its statement leaves out when absent. */
export interface ChangeShape {
  stampColumn: string | undefined;
  /** A state change, with its audit row. */
  stateChange: boolean;
  message: boolean;
  artifacts: boolean;
  keys: boolean;
  /** Bytes added or freed (docs/orgs.md#quotas): the writer's party's tally and its org's counter. */
  storedBytes: boolean;
}

/** What every statement that changes a task is given (`@name`): the task as read, what it becomes, its artifacts, events and bytes. */
interface TaskWriteValues {
  taskId: string;
  expectedState: string;
  expectedVersion: number;
  state: string;
  now: Date;
  resultSummary: string | null;
  reason: string | null;
  artifacts: string;
  events: string;
  traceParent: string | null;
  writerOrg: string;
  shard: number;
  storedBytes: number;
  senderBytes: number;
  recipientBytes: number;
}

/** The values of a change statement, by the names its text uses (`@name`). */
export interface ChangeValues extends TaskWriteValues {
  actorId: string | null;
  transition: string | null;
  sessionId: string | null;
  messageId: string | null;
  author: string | null;
  authorId: string | null;
  fromHandle: string | null;
  body: string | null;
  parts: string;
  payload: string;
  messageBytes: number;
  senderId: string | null;
  scopes: string[];
  keys: string[];
  requestHash: string | null;
}

/**
 * The task's UPDATE, conditional on the state and version read (it loses to any concurrent change
 * of the task, and then writes nothing), setting `sets` besides its version; with `storedBytes`,
 * the bytes added or freed on the writers' tallies.
 */
function changedPart(sets: string, storedBytes: boolean): string {
  return `WITH changed AS (
  UPDATE "tasks"."tasks" t
  SET "updated_at" = @now, "version" = t."version" + 1${sets}${
    storedBytes
      ? `, "sender_stored_bytes" = t."sender_stored_bytes" + @senderBytes::bigint, "recipient_stored_bytes" = t."recipient_stored_bytes" + @recipientBytes::bigint`
      : ''
  }
  WHERE t."id" = @taskId AND t."state" = @expectedState AND t."version" = @expectedVersion
  RETURNING ${TASK_COLUMNS}
)`;
}

/** A state change's columns: the state, its timestamps (`stampColumns` among them), the result summary and the reason as given. */
function stateSets(stampColumns: string[], resultSummary: string, reason: string): string {
  return `, "state" = @state, "status_timestamp" = @now,${stampColumns.map((column) => ` "${column}" = @now,`).join('')}
      "result_summary" = ${resultSummary}, "reason" = ${reason}`;
}

const INSERT_KEYS = `INSERT INTO "tasks"."idempotency_keys" ("sender_id", "scope", "key", "request_hash", "task_id", "sequence_no", "created_task")`;

const INSERT_AUDIT = `INSERT INTO "tasks"."audit_log" ("task_id", "actor_id", "transition", "from_state", "to_state", "session_id", "reason", "at")`;

const INSERT_MESSAGES = `INSERT INTO "tasks"."messages" ("task_id", "sequence_no", "id", "author", "author_id", "from_handle", "body", "parts", "payload", "created_at", "size_bytes")`;

/** The artifacts a change adds or changes (`@artifacts`), inserted or updated in place. */
const ARTIFACTS_PART = `artifact AS (
  INSERT INTO "tasks"."artifacts" ("task_id", "artifact_id", "position", "type", "fields", "name", "description", "parts", "metadata",
    "last_chunk", "created_at", "updated_at", "size_bytes")
  SELECT c."id", a."artifact_id", a."position", a."type", a."fields", a."name", a."description", a."parts", a."metadata", a."last_chunk", @now, @now,
    a."size_bytes"
  FROM changed c, jsonb_to_recordset(@artifacts::jsonb) AS a("artifact_id" text, "position" int, "type" text, "fields" jsonb, "name" text,
    "description" text, "parts" jsonb, "metadata" jsonb, "last_chunk" boolean, "size_bytes" int)
  ON CONFLICT ("task_id", "artifact_id") DO UPDATE SET "type" = EXCLUDED."type", "fields" = EXCLUDED."fields", "name" = EXCLUDED."name",
    "description" = EXCLUDED."description", "parts" = EXCLUDED."parts", "metadata" = EXCLUDED."metadata", "last_chunk" = EXCLUDED."last_chunk",
    "updated_at" = EXCLUDED."updated_at", "size_bytes" = EXCLUDED."size_bytes"
)`;

/** The bytes a change adds or frees, on the writer's org's counter. */
const STORED_BYTES_PART = `stored AS (
  ${addStoredBytesSql('@writerOrg::text', '@shard::smallint', '@storedBytes::bigint', 'changed c')}
)`;

/** The change's events (`@events`), in order, in the outbox. */
const OUTBOX_PART = `outbox AS (
  INSERT INTO "tasks"."outbox_events" ("id", "subject", "type", "task_id", "payload", "created_at", "trace_parent")
  SELECT e."id", e."subject", e."type", c."id", e."payload", @now, @traceParent
  FROM changed c, ROWS FROM (jsonb_to_recordset(@events::jsonb) AS ("id" uuid, "subject" text, "type" text, "payload" jsonb)) WITH ORDINALITY
    AS e("id", "subject", "type", "payload", "ordinal")
  ORDER BY e."ordinal"
  RETURNING "id", "position"
)`;

/** What a change statement answers: the task as written, the caller's unread count, and the events to publish after the commit. */
const CHANGED_ANSWER = `SELECT c.*, ${unreadCountSql('c."id"', '@callerId')}::int AS "unread",
  ${earlierUnpublishedSql('c."id"')} AS "earlier_events", ${OWN_POSITIONS_SQL} AS "event_positions"
FROM changed c`;

/**
 * The whole change in one statement: the UPDATE conditional on the state and version read (it
 * loses to any concurrent change of the task, and then writes nothing), and, as the shape has
 * them, the state change with its audit row, the message (numbered after the task's last one),
 * the artifacts added or changed, the sender's idempotency keys; the outbox events in order, and
 * the caller's unread count for the reply; the bytes it adds or frees, on the writer's tally and
 * its org's counter. It answers the events to publish after the commit: the
 * task's earlier ones not published yet, and its own with their positions. One statement per shape and state-timestamp column,
 * each prepared once, so that a bare state change carries nothing it does not write.
 */
function changeTaskText(shape: ChangeShape): string {
  const parts = [
    changedPart(
      `${shape.message ? `, "message_count" = t."message_count" + 1` : ''}${
        shape.stateChange
          ? stateSets(shape.stampColumn ? [shape.stampColumn] : [], `COALESCE(@resultSummary, t."result_summary")`, `COALESCE(@reason, t."reason")`)
          : ''
      }`,
      shape.storedBytes,
    ),
  ];
  if (shape.message) {
    parts.push(`message AS (
  ${INSERT_MESSAGES}
  SELECT c."id", c."message_count", @messageId, @author, @authorId, @fromHandle, @body, @parts::jsonb, @payload::jsonb, @now, @messageBytes FROM changed c
)`);
  }
  if (shape.artifacts) parts.push(ARTIFACTS_PART);
  if (shape.storedBytes) parts.push(STORED_BYTES_PART);
  if (shape.keys) {
    parts.push(`idempotency AS (
  ${INSERT_KEYS}
  SELECT @senderId, k."scope", k."key", @requestHash, c."id", c."message_count", false FROM changed c, unnest(@scopes::text[], @keys::text[]) AS k("scope", "key")
)`);
  }
  if (shape.stateChange) {
    parts.push(`audit AS (
  ${INSERT_AUDIT}
  SELECT c."id", @actorId, @transition, @expectedState, @state, @sessionId, @reason, @now FROM changed c
)`);
  }
  return `${[...parts, OUTBOX_PART].join(', ')}
${CHANGED_ANSWER}`;
}

interface PreparedChange {
  name: string;
  text: string;
  names: string[];
}

const prepared = new Map<string, PreparedChange>();

/** The statement `name` (its text made by `text` the first time), numbered (`@name` → `$n`), with `values` in its order. */
function namedStatement<Values extends object>(name: string, text: () => string, values: Values): { name: string; text: string; values: unknown[] } {
  let statement = prepared.get(name);
  if (!statement) {
    const names: string[] = [];
    const numbered = text().replace(/@([A-Za-z]+)/g, (_, param: string) => {
      if (!names.includes(param)) names.push(param);
      return `$${names.indexOf(param) + 1}`;
    });
    statement = { name, text: numbered, names };
    prepared.set(name, statement);
  }
  return { name, text: statement.text, values: statement.names.map((param) => values[param as keyof Values]) };
}

/** The change statement of a shape, named and numbered (`@name` → `$n`), with the values in its order. */
export function changeTaskStatement(shape: ChangeShape, values: ChangeValues & { callerId: string }): { name: string; text: string; values: unknown[] } {
  const name = `tasks-change-task-${shape.stampColumn ?? 'none'}-${[shape.stateChange, shape.message, shape.artifacts, shape.keys, shape.storedBytes].map(Number).join('')}`;
  return namedStatement(name, () => changeTaskText(shape), values);
}

/** What changes made one after another write in one statement (`changeStepsStatement`); each part left out when absent. */
export interface StepsShape {
  /** The state-timestamp columns the steps' state changes stamp, in order. */
  stampColumns: string[];
  /** At least one state change, each with its audit row. */
  stateChange: boolean;
  messages: boolean;
  artifacts: boolean;
  keys: boolean;
  storedBytes: boolean;
}

/** The values of a steps statement, by the names its text uses (`@name`); the rows are JSON arrays. */
export interface StepsValues extends TaskWriteValues {
  messagesAdded: number;
  callerId: string;
  messages: string;
  keys: string;
  audits: string;
}

/**
 * Several changes of one task, decided one after another on the task as each leaves it, written
 * as one: the UPDATE (conditional on the state and version first read) to the task as the last
 * step leaves it, every step's message, idempotency keys and audit row, the artifacts as they end
 * up, the bytes, and the events of every step in order; answered as `changeTaskText` answers.
 */
function changeStepsText(shape: StepsShape): string {
  const parts = [
    changedPart(
      `, "message_count" = t."message_count" + @messagesAdded::int${shape.stateChange ? stateSets(shape.stampColumns, '@resultSummary', '@reason') : ''}`,
      shape.storedBytes,
    ),
  ];
  if (shape.messages) {
    parts.push(`message AS (
  ${INSERT_MESSAGES}
  SELECT c."id", m."sequence_no", m."id", m."author", m."author_id", m."from_handle", m."body", m."parts", m."payload", @now, m."size_bytes"
  FROM changed c, jsonb_to_recordset(@messages::jsonb) AS m("sequence_no" int, "id" text, "author" text, "author_id" text, "from_handle" text, "body" text,
    "parts" jsonb, "payload" jsonb, "size_bytes" int)
)`);
  }
  if (shape.artifacts) parts.push(ARTIFACTS_PART);
  if (shape.storedBytes) parts.push(STORED_BYTES_PART);
  if (shape.keys) {
    parts.push(`idempotency AS (
  ${INSERT_KEYS}
  SELECT k."sender_id", k."scope", k."key", k."request_hash", c."id", k."sequence_no", false
  FROM changed c, jsonb_to_recordset(@keys::jsonb) AS k("sender_id" text, "scope" text, "key" text, "request_hash" text, "sequence_no" int)
)`);
  }
  if (shape.stateChange) {
    parts.push(`audit AS (
  ${INSERT_AUDIT}
  SELECT c."id", a."actor_id", a."transition", a."from_state", a."to_state", a."session_id", a."reason", @now
  FROM changed c, ROWS FROM (jsonb_to_recordset(@audits::jsonb) AS ("actor_id" text, "transition" text, "from_state" text, "to_state" text,
    "session_id" text, "reason" text)) WITH ORDINALITY AS a("actor_id", "transition", "from_state", "to_state", "session_id", "reason", "ordinal")
  ORDER BY a."ordinal"
)`);
  }
  return `${[...parts, OUTBOX_PART].join(', ')}
${CHANGED_ANSWER}`;
}

/** The steps statement of a shape, named and numbered, with the values in its order. */
export function changeStepsStatement(shape: StepsShape, values: StepsValues): { name: string; text: string; values: unknown[] } {
  const name = `tasks-change-steps-${shape.stampColumns.join('+') || 'none'}-${[shape.stateChange, shape.messages, shape.artifacts, shape.keys, shape.storedBytes].map(Number).join('')}`;
  return namedStatement(name, () => changeStepsText(shape), values);
}

/** The history a change's reply carries: the newest messages after `$2`, within a reply's byte budget. */
export const CHANGE_HISTORY_SQL = `SELECT ${messagesWithinBudgetSql('$1', '$2', 'false')} AS "messages"`;
