import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import type pg from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import {
  RelayError,
  TASK_LIMITS,
  isTerminalState,
  type ArtifactInput,
  type GetRequest,
  type Intent,
  type ListReply,
  type ListRequest,
  type MessageInput,
  type ParticipantRefDto,
  type PartView,
  type ProposedActionDto,
  type SendReply,
  type SendRequest,
  type TaskView,
  type TransitionReply,
  type TransitionRequest,
} from '@app/contracts';
import { appendedBytes, artifactBytes, artifactLimitError } from './artifact-limits';
import { validateTypedArtifact } from './artifact-rules';
import { AuditLogEntity } from './audit-log.entity';
import { IdempotencyKeyEntity } from './idempotency-key.entity';
import { decodeCursor, encodeCursor } from './list-cursor';
import { messageBytes, messageFromJson, messagesWithinBudgetSql, type JsonMessage } from './message-budget';
import { checkTransition, STATE_TIMESTAMP_COLUMN, type Party } from './state-machine';
import { writeTaskEvent } from './task-events';
import { createTaskInOneStatement, creatableInOneStatement, nextTaskId } from './task-creation';
import { readTask } from './task-read';
import { transitionableInOneStatement, transitionInOneStatement } from './task-transition';
import { firstText, TASK_COLUMNS, toMessageRef, toMessageView, toTaskView, type ArtifactRow, type MessageRow, type TaskRow } from './task-rows';

type IdempotencyScope = 'message_id' | 'client_key';

interface PgError {
  code?: string;
  constraint?: string;
  driverError?: { code?: string; constraint?: string };
}

function pgError(error: unknown): { code?: string; constraint?: string } {
  const candidate = error as PgError;
  return candidate.driverError ?? candidate;
}

/** Rows of an `UPDATE … RETURNING` (TypeORM answers `[rows, count]` for an UPDATE). */
function updatedRows<T>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as T[];
  return result as T[];
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What makes two sends "the same": everything but the keys themselves and the reply shape. */
function requestHash(request: SendRequest): string {
  const content = {
    task_id: request.task_id ?? null,
    recipient: request.recipient?.id ?? null,
    context_id: request.context_id ?? null,
    parts: request.message.parts,
    payload: request.message.payload ?? {},
    intent: request.intent ?? null,
    proposed_action: request.proposed_action ?? null,
    artifacts: request.artifacts ?? [],
    metadata: request.metadata ?? {},
  };
  return createHash('sha256').update(stableJson(content)).digest('hex');
}

function plainParts(parts: MessageInput['parts']): PartView[] {
  return JSON.parse(JSON.stringify(parts)) as PartView[];
}

function validateIntent(intent: Intent | undefined, proposedAction: ProposedActionDto | null | undefined): void {
  const hasAction = proposedAction !== undefined && proposedAction !== null;
  if (intent === 'propose_action' && !hasAction) {
    throw new RelayError('invalid_intent_payload', 'intent propose_action requires a proposed_action', { field: 'proposed_action', intent });
  }
  if (intent !== 'propose_action' && hasAction) {
    throw new RelayError('invalid_intent_payload', `proposed_action must be null or omitted for intent ${intent ?? 'inform'}`, {
      field: 'proposed_action',
      intent: intent ?? 'inform',
    });
  }
}

function validateArtifacts(artifacts: ArtifactInput[] | undefined): void {
  (artifacts ?? []).forEach((artifact, index) => {
    if (artifact.type !== undefined) validateTypedArtifact(artifact.type, artifact.fields ?? {}, `artifacts.${index}`);
  });
}

function partyOf(task: TaskRow, callerId: string): Party {
  if (task.sender_id === callerId) return 'sender';
  if (task.recipient_id === callerId) return 'recipient';
  throw new RelayError('not_a_participant', 'You are not a participant of this thread', { task_id: task.id });
}

/**
 * The task state machine on Postgres. Every change (task, message, artifacts, audit row,
 * outbox event) is written in one transaction; transitions are decided by a conditional UPDATE.
 */
@Injectable()
export class TasksService {
  private readonly logger = new Logger(TasksService.name);

  private readonly pool: pg.Pool;

  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {
    // The pg pool behind TypeORM: the hot path's single statements go to it directly.
    this.pool = (dataSource.driver as unknown as { master: pg.Pool }).master;
  }

  async send(request: SendRequest): Promise<SendReply> {
    if (request.task_id === undefined && request.recipient === undefined) {
      throw new RelayError('invalid_params', 'recipient is required to create a thread', { field: 'recipient' });
    }
    if (request.task_id === undefined && request.recipient?.id === request.caller.id) {
      throw new RelayError('invalid_params', 'recipient cannot be yourself: a handoff goes to another agent', { field: 'recipient' });
    }
    if (request.task_id === undefined || request.intent !== undefined || request.proposed_action != null) {
      validateIntent(request.intent, request.proposed_action);
    }
    validateArtifacts(request.artifacts);
    // Only a send with an idempotency key (or a client message id) is ever compared with another.
    const hash = this.keysOf(request).length > 0 ? requestHash(request) : '';
    for (let attempt = 0; ; attempt++) {
      try {
        if (attempt === 0 && creatableInOneStatement(request)) {
          const created = await this.createInOneStatement(request, hash);
          if (created) return created;
        }
        return await this.dataSource.transaction(async (manager) => {
          const replay = await this.replay(manager, request, hash);
          if (replay) return replay;
          return request.task_id === undefined ? this.create(manager, request, hash) : this.append(manager, request, hash);
        });
      } catch (error) {
        const { code, constraint } = pgError(error);
        if (code === '23505' && constraint === 'idempotency_keys_pkey' && attempt < 2) continue;
        if (code === '23505' && constraint === 'messages_task_id_id_key') {
          throw new RelayError('invalid_params', 'message.message_id is already used by another message of this thread', { field: 'message.message_id' });
        }
        throw error;
      }
    }
  }

  async get(request: GetRequest): Promise<TaskView> {
    const read = await readTask(this.pool, request);
    return toTaskView(read.task, read.messages, read.artifacts, read.unread);
  }

  async list(request: ListRequest): Promise<ListReply> {
    const order = request.order ?? 'created';
    const limit = request.limit ?? TASK_LIMITS.listDefaultLimit;
    const params: unknown[] = [request.caller_id];
    const where: string[] = [];
    const role = request.role ?? 'recipient';
    where.push(role === 'recipient' ? `t."recipient_id" = $1` : role === 'sender' ? `t."sender_id" = $1` : `(t."sender_id" = $1 OR t."recipient_id" = $1)`);
    const add = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    if (request.states && request.states.length > 0) where.push(`t."state" = ANY(${add(request.states)}::text[])`);
    if (request.since) where.push(`(t."created_at" > ${add(request.since)}::timestamptz OR t."updated_at" > $${params.length}::timestamptz)`);
    if (request.status_timestamp_after) where.push(`t."status_timestamp" > ${add(request.status_timestamp_after)}::timestamptz`);
    if (request.counterpart_id) {
      const counterpart = add(request.counterpart_id);
      where.push(`((t."sender_id" = $1 AND t."recipient_id" = ${counterpart}) OR (t."recipient_id" = $1 AND t."sender_id" = ${counterpart}))`);
    }
    if (request.context_id) where.push(`t."context_id" = ${add(request.context_id)}`);
    const filtered = [...where];
    if (request.cursor) {
      const cursor = decodeCursor(request.cursor, order);
      if (order === 'created') where.push(`t."id" < ${add(cursor.id)}`);
      else where.push(`(t."status_timestamp", t."id") < (${add(cursor.status_key)}::timestamptz, ${add(cursor.id)})`);
    }
    const orderBy = order === 'created' ? `t."id" DESC` : `t."status_timestamp" DESC, t."id" DESC`;
    const rows: TaskRow[] = await this.dataSource.query(
      `SELECT ${TASK_COLUMNS},
         to_char(t."status_timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "status_key",
         (SELECT count(*) FROM "tasks"."messages" m
           WHERE m."task_id" = t."id" AND m."author_id" <> $1
             AND m."sequence_no" > COALESCE((SELECT r."last_read_sequence_no" FROM "tasks"."read_cursors" r
                                             WHERE r."task_id" = t."id" AND r."participant_id" = $1), 0)) AS "unread_messages"
       FROM "tasks"."tasks" t
       WHERE ${where.join(' AND ')}
       ORDER BY ${orderBy}
       LIMIT ${limit + 1}`,
      params,
    );
    const candidates = rows.slice(0, limit);
    const ids = candidates.map((row) => row.id);
    const historyLength = request.history_length ?? 0;
    const messages: MessageRow[] =
      historyLength > 0 && ids.length > 0
        ? await this.dataSource.query(
            `SELECT m.* FROM "tasks"."messages" m JOIN "tasks"."tasks" t ON t."id" = m."task_id"
             WHERE m."task_id" = ANY($1::text[]) AND m."sequence_no" > t."message_count" - $2 ORDER BY m."task_id", m."sequence_no"`,
            [ids, historyLength],
          )
        : [];
    const artifacts: ArtifactRow[] =
      ids.length > 0 && request.include_artifacts !== false
        ? await this.dataSource.query(`SELECT * FROM "tasks"."artifacts" WHERE "task_id" = ANY($1::text[]) ORDER BY "task_id", "position"`, [ids])
        : [];
    // Items are added while they fit one reply; the cursor goes on after the last one added.
    const items: TaskView[] = [];
    let bytes = 0;
    for (const row of candidates) {
      const item = toTaskView(
        row,
        messages.filter((message) => message.task_id === row.id),
        artifacts.filter((artifact) => artifact.task_id === row.id),
        Number(row.unread_messages ?? 0),
      );
      if (request.summary_max_chars !== undefined) item.summary = item.summary.slice(0, request.summary_max_chars);
      bytes += Buffer.byteLength(JSON.stringify(item));
      if (items.length > 0 && bytes > TASK_LIMITS.replyListBytes) break;
      items.push(item);
    }
    const last = candidates[items.length - 1];
    const more = items.length < candidates.length || rows.length > limit;
    const reply: ListReply = { items, next_cursor: more && last ? encodeCursor({ order, id: last.id, status_key: last.status_key }) : null };
    if (request.include_total) {
      const [{ total }] = await this.dataSource.query(
        `SELECT count(*)::int AS "total" FROM "tasks"."tasks" t WHERE ${filtered.join(' AND ')}`,
        params.slice(0, countParams(filtered)),
      );
      reply.total_size = total;
    }
    return reply;
  }

  async transition(request: TransitionRequest): Promise<TransitionReply> {
    if (request.transition === 'request_input' && !request.message) {
      throw new RelayError('invalid_params', 'request_input needs a message (the question)', { field: 'message' });
    }
    if (request.transition === 'progress' && !request.message && !(request.artifacts && request.artifacts.length > 0)) {
      throw new RelayError('invalid_params', 'a status update needs a message or artifacts', { field: 'message' });
    }
    validateArtifacts(request.artifacts);
    if (transitionableInOneStatement(request)) {
      const { task, artifacts, unread } = await transitionInOneStatement(this.pool, request);
      this.logger.debug({ task_id: task.id, transition: request.transition, to: task.state, actor_id: request.caller_id }, 'thread transition');
      return { task: toTaskView(task, [], artifacts, unread), message: null };
    }
    try {
      return await this.dataSource.transaction((manager) => this.applyTransition(manager, request));
    } catch (error) {
      const { code, constraint } = pgError(error);
      if (code === '23505' && constraint === 'messages_task_id_id_key') {
        throw new RelayError('invalid_params', 'message.message_id is already used by another message of this thread', { field: 'message.message_id' });
      }
      throw error;
    }
  }

  private async applyTransition(manager: EntityManager, request: TransitionRequest): Promise<TransitionReply> {
    const current = await this.loadTask(manager, request.task_id);
    const party = partyOf(current, request.caller_id);
    const rule = checkTransition(request.transition, request.cancel_mode, current.state, party);
    const now = new Date();
    let task: TaskRow;
    if (rule.to) {
      const stampColumn = STATE_TIMESTAMP_COLUMN[rule.to];
      const rows = updatedRows<TaskRow>(
        await manager.query(
          `UPDATE "tasks"."tasks" t
           SET "state" = $3, "status_timestamp" = $4, "updated_at" = $4, "version" = t."version" + 1,
               ${stampColumn ? `"${stampColumn}" = $4,` : ''}
               "result_summary" = COALESCE($5, t."result_summary"), "reason" = COALESCE($6, t."reason")
           WHERE t."id" = $1 AND t."state" = $2
           RETURNING ${TASK_COLUMNS}`,
          [current.id, current.state, rule.to, now, request.result_summary ?? null, request.reason ?? null],
        ),
      );
      if (rows.length === 0) {
        const latest = await this.loadTask(manager, request.task_id);
        throw new RelayError('state_changed', `Another caller changed the thread from ${current.state} to ${latest.state} first`, {
          expected_state: current.state,
          state: latest.state,
        });
      }
      task = rows[0];
      this.logger.log(
        { task_id: task.id, transition: request.transition, from: current.state, to: rule.to, actor_id: request.caller_id },
        'thread transition',
      );
      await manager.insert(AuditLogEntity, {
        taskId: task.id,
        actorId: request.caller_id,
        transition: request.transition,
        fromState: current.state,
        toState: rule.to,
        sessionId: request.session_id ?? null,
        reason: request.reason ?? null,
        at: now,
      });
    } else {
      task = await this.loadTask(manager, request.task_id, true);
      if (task.state !== current.state && !rule.from.includes(task.state)) {
        throw new RelayError('state_changed', `Another caller changed the thread to ${task.state} first`, {
          expected_state: current.state,
          state: task.state,
        });
      }
    }
    let message: MessageRow | null = null;
    if (request.message) {
      ({ task, message } = await this.appendMessage(manager, task, party, request.message, now));
    }
    await this.upsertArtifacts(manager, task.id, request.artifacts, now);
    if (rule.event) await writeTaskEvent(manager, rule.event, task, message, now);
    else if (message) await writeTaskEvent(manager, 'message_appended', task, message, now);
    else if (!rule.to) await this.touch(manager, task.id, now);
    return {
      task: await this.view(manager, task, request.history_length, await this.unreadCount(manager, task.id, request.caller_id)),
      message: message ? toMessageView(message) : null,
    };
  }

  /** A create in one round trip; null (nothing written) when an idempotency key is already known. */
  private async createInOneStatement(request: SendRequest, hash: string): Promise<SendReply | null> {
    const artifactParts = (artifact: ArtifactInput): PartView[] => (artifact.parts ? plainParts(artifact.parts) : []);
    const created = await createTaskInOneStatement(this.pool, request, plainParts(request.message.parts), artifactParts, this.keysOf(request), hash);
    if (!created) return null;
    const history = request.history_length === 0 ? [] : [created.message];
    return {
      task: toTaskView(created.task, history, created.artifacts, 0),
      message: toMessageRef(created.message),
      created: true,
      idempotent_replay: false,
    };
  }

  private async create(manager: EntityManager, request: SendRequest, hash: string): Promise<SendReply> {
    const sender = request.caller;
    const recipient = request.recipient as ParticipantRefDto;
    const contextId = await this.claimContext(manager, request.context_id, sender.id);
    const id = nextTaskId();
    const now = new Date();
    const parts = plainParts(request.message.parts);
    const intent = request.intent ?? 'inform';
    const [task]: TaskRow[] = await manager.query(
      `INSERT INTO "tasks"."tasks" AS t ("id", "context_id", "sender_id", "sender_handle", "sender_name", "sender_role",
         "recipient_id", "recipient_handle", "recipient_name", "recipient_role", "state", "intent", "summary", "proposed_action",
         "metadata", "message_count", "created_at", "updated_at", "status_timestamp")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', $11, $12, $13, $14, 1, $15, $15, $15)
       RETURNING ${TASK_COLUMNS}`,
      [
        id,
        contextId,
        sender.id,
        sender.handle,
        sender.name,
        sender.role ?? null,
        recipient.id,
        recipient.handle,
        recipient.name,
        recipient.role ?? null,
        intent,
        firstText(parts),
        request.proposed_action ? JSON.stringify(request.proposed_action) : null,
        JSON.stringify(request.metadata ?? {}),
        now,
      ],
    );
    const message = await this.insertMessage(manager, task, 'sender', 1, request.message, parts, now);
    await this.upsertArtifacts(manager, task.id, request.artifacts, now);
    await manager.insert(AuditLogEntity, { taskId: task.id, actorId: sender.id, transition: 'create', fromState: null, toState: 'pending', at: now });
    await this.rememberKeys(manager, request, hash, message, true);
    await writeTaskEvent(manager, 'created', task, message, now);
    return { task: await this.view(manager, task, request.history_length, 0), message: toMessageRef(message), created: true, idempotent_replay: false };
  }

  private async append(manager: EntityManager, request: SendRequest, hash: string): Promise<SendReply> {
    const current = await this.loadTask(manager, request.task_id as string, true);
    const party = partyOf(current, request.caller.id);
    if (request.context_id !== undefined && request.context_id !== current.context_id) {
      throw new RelayError('invalid_params', "context_id does not match the thread's context", { field: 'context_id' });
    }
    if (isTerminalState(current.state)) {
      throw new RelayError('thread_terminal', `The thread is ${current.state}; no more messages can be added`, { state: current.state });
    }
    const now = new Date();
    const resumes = current.state === 'input_required' && party === 'sender';
    let task = current;
    if (resumes) {
      [task] = updatedRows<TaskRow>(
        await manager.query(
          `UPDATE "tasks"."tasks" t SET "state" = 'accepted', "status_timestamp" = $2, "updated_at" = $2, "version" = t."version" + 1
           WHERE t."id" = $1 AND t."state" = 'input_required' RETURNING ${TASK_COLUMNS}`,
          [current.id, now],
        ),
      );
      await manager.insert(AuditLogEntity, {
        taskId: task.id,
        actorId: request.caller.id,
        transition: 'resume',
        fromState: 'input_required',
        toState: 'accepted',
        at: now,
      });
    }
    const appended = await this.appendMessage(manager, task, party, request.message, now);
    task = appended.task;
    await this.upsertArtifacts(manager, task.id, request.artifacts, now);
    await this.rememberKeys(manager, request, hash, appended.message, false);
    await writeTaskEvent(manager, 'message_appended', task, appended.message, now);
    if (resumes) await writeTaskEvent(manager, 'accepted', task, appended.message, now);
    const unread = await this.unreadCount(manager, task.id, request.caller.id);
    return {
      task: await this.view(manager, task, request.history_length, unread),
      message: toMessageRef(appended.message),
      created: false,
      idempotent_replay: false,
    };
  }

  /** Appends a message to a task whose row this transaction has locked (FOR UPDATE or UPDATE). */
  private async appendMessage(
    manager: EntityManager,
    current: TaskRow,
    party: Party,
    input: MessageInput,
    now: Date,
  ): Promise<{ task: TaskRow; message: MessageRow }> {
    if (current.message_count >= TASK_LIMITS.messagesPerTask) {
      throw new RelayError('thread_message_limit', `The thread holds the maximum of ${TASK_LIMITS.messagesPerTask} messages`, {
        limit: TASK_LIMITS.messagesPerTask,
      });
    }
    const sequenceNo = current.message_count + 1;
    const [task] = updatedRows<TaskRow>(
      await manager.query(
        `UPDATE "tasks"."tasks" t SET "message_count" = $2, "updated_at" = $3, "version" = t."version" + 1
         WHERE t."id" = $1 AND t."message_count" = $4 RETURNING ${TASK_COLUMNS}`,
        [current.id, sequenceNo, now, current.message_count],
      ),
    );
    if (!task) throw new RelayError('state_changed', 'Another message was appended to the thread at the same time', { task_id: current.id });
    const message = await this.insertMessage(manager, task, party, sequenceNo, input, plainParts(input.parts), now);
    return { task, message };
  }

  private async insertMessage(
    manager: EntityManager,
    task: TaskRow,
    party: Party,
    sequenceNo: number,
    input: MessageInput,
    parts: PartView[],
    now: Date,
  ): Promise<MessageRow> {
    const partsJson = JSON.stringify(parts);
    const payloadJson = JSON.stringify(input.payload ?? {});
    const body = firstText(parts);
    const [message]: MessageRow[] = await manager.query(
      `INSERT INTO "tasks"."messages" ("task_id", "sequence_no", "id", "author", "author_id", "from_handle", "body", "parts", "payload", "created_at", "size_bytes")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
      [
        task.id,
        sequenceNo,
        input.message_id ?? randomUUID(),
        party,
        party === 'sender' ? task.sender_id : task.recipient_id,
        party === 'sender' ? task.sender_handle : task.recipient_handle,
        body,
        partsJson,
        payloadJson,
        now,
        messageBytes(body, partsJson, payloadJson),
      ],
    );
    return message;
  }

  /**
   * Adds, replaces or appends to the task's artifacts, on a task row this transaction has
   * locked. Each write checks the task's artifact caps in its own statement and writes nothing
   * past them.
   */
  private async upsertArtifacts(manager: EntityManager, taskId: string, artifacts: ArtifactInput[] | undefined, now: Date): Promise<void> {
    const caps = [TASK_LIMITS.artifactsPerTask, TASK_LIMITS.artifactBytesPerTask];
    for (const artifact of artifacts ?? []) {
      const artifactId = artifact.artifact_id ?? randomUUID();
      const parts = artifact.parts ? plainParts(artifact.parts) : [];
      const [existing]: ArtifactRow[] = await manager.query(`SELECT * FROM "tasks"."artifacts" WHERE "task_id" = $1 AND "artifact_id" = $2`, [
        taskId,
        artifactId,
      ]);
      if (existing && artifact.append) {
        const added = appendedBytes(artifact, parts);
        const appended: unknown[] = await manager.query(
          `UPDATE "tasks"."artifacts" SET "parts" = "parts" || $3::jsonb, "last_chunk" = $4, "updated_at" = $5,
             "metadata" = "metadata" || $6::jsonb, "size_bytes" = "size_bytes" + $7
           WHERE "task_id" = $1 AND "artifact_id" = $2
             AND (SELECT sum(o."size_bytes") FROM "tasks"."artifacts" o WHERE o."task_id" = $1) + $7::int <= $8::int
           RETURNING 1`,
          [taskId, artifactId, JSON.stringify(parts), artifact.last_chunk ?? false, now, JSON.stringify(artifact.metadata ?? {}), added, caps[1]],
        );
        if (updatedRows(appended).length === 0) throw artifactLimitError(await this.artifactsHeld(manager, taskId), { count: 0, bytes: added });
        continue;
      }
      const stored = {
        type: artifact.type ?? null,
        fields: artifact.fields ?? {},
        name: artifact.name ?? null,
        description: artifact.description ?? null,
        parts,
        metadata: artifact.metadata ?? {},
      };
      const size = artifactBytes(stored);
      const values = [
        taskId,
        artifactId,
        stored.type,
        JSON.stringify(stored.fields),
        stored.name,
        stored.description,
        JSON.stringify(parts),
        JSON.stringify(stored.metadata),
        artifact.append ? (artifact.last_chunk ?? false) : (artifact.last_chunk ?? true),
        now,
        size,
        ...caps,
      ];
      // The task's other artifacts, and this one at its new size, within both caps.
      const withinCaps = `(SELECT count(*) < $12::int AND COALESCE(sum(o."size_bytes"), 0) + $11::int <= $13::int
        FROM "tasks"."artifacts" o WHERE o."task_id" = $1::text AND o."artifact_id" <> $2::text)`;
      const written: unknown[] = existing
        ? await manager.query(
            `UPDATE "tasks"."artifacts" SET "type" = $3, "fields" = $4, "name" = $5, "description" = $6, "parts" = $7, "metadata" = $8,
               "last_chunk" = $9, "updated_at" = $10, "size_bytes" = $11
             WHERE "task_id" = $1::text AND "artifact_id" = $2::text AND ${withinCaps}
             RETURNING 1`,
            values,
          )
        : await manager.query(
            `INSERT INTO "tasks"."artifacts" ("task_id", "artifact_id", "type", "fields", "name", "description", "parts", "metadata", "last_chunk",
               "created_at", "updated_at", "size_bytes", "position")
             SELECT $1::text, $2::text, $3::text, $4::jsonb, $5::text, $6::text, $7::jsonb, $8::jsonb, $9::boolean, $10::timestamptz, $10::timestamptz, $11::int,
               (SELECT COALESCE(MAX("position"), 0) + 1 FROM "tasks"."artifacts" WHERE "task_id" = $1::text)
             WHERE ${withinCaps}
             RETURNING 1`,
            values,
          );
      if (updatedRows(written).length === 0) {
        const held = await this.artifactsHeld(manager, taskId);
        throw artifactLimitError(existing ? { count: held.count - 1, bytes: held.bytes - Number(existing.size_bytes ?? 0) } : held, { count: 1, bytes: size });
      }
    }
  }

  /** How many artifacts a task holds and their bytes (to say which cap a refused write met). */
  private async artifactsHeld(manager: EntityManager, taskId: string): Promise<{ count: number; bytes: number }> {
    const [held]: Array<{ count: number; bytes: number }> = await manager.query(
      `SELECT count(*)::int AS "count", COALESCE(sum("size_bytes"), 0)::int AS "bytes" FROM "tasks"."artifacts" WHERE "task_id" = $1`,
      [taskId],
    );
    return held;
  }

  private async touch(manager: EntityManager, taskId: string, now: Date): Promise<void> {
    await manager.query(`UPDATE "tasks"."tasks" SET "updated_at" = $2, "version" = "version" + 1 WHERE "id" = $1`, [taskId, now]);
  }

  /** A new context, or a sibling in an existing one the caller takes part in (at most 100 tasks). */
  private async claimContext(manager: EntityManager, contextId: string | undefined, senderId: string): Promise<string> {
    if (contextId === undefined) return randomUUID();
    await manager.query(`SELECT pg_advisory_xact_lock(hashtext('tasks.context:' || $1))`, [contextId]);
    const [{ total, mine }] = await manager.query(
      `SELECT count(*)::int AS "total", count(*) FILTER (WHERE "sender_id" = $2 OR "recipient_id" = $2)::int AS "mine"
       FROM "tasks"."tasks" WHERE "context_id" = $1`,
      [contextId, senderId],
    );
    if (total > 0 && mine === 0) throw new RelayError('invalid_params', 'context_id names a context you take no part in', { field: 'context_id' });
    if (total >= TASK_LIMITS.tasksPerContext) {
      throw new RelayError('context_limit_reached', `The context holds the maximum of ${TASK_LIMITS.tasksPerContext} tasks`, {
        context_id: contextId,
        limit: TASK_LIMITS.tasksPerContext,
      });
    }
    return contextId;
  }

  private keysOf(request: SendRequest): Array<{ scope: IdempotencyScope; key: string; field: string }> {
    const keys: Array<{ scope: IdempotencyScope; key: string; field: string }> = [];
    if (request.message.message_id !== undefined) keys.push({ scope: 'message_id', key: request.message.message_id, field: 'message.message_id' });
    if (request.idempotency_key !== undefined) keys.push({ scope: 'client_key', key: request.idempotency_key, field: 'idempotency_key' });
    return keys;
  }

  private async replay(manager: EntityManager, request: SendRequest, hash: string): Promise<SendReply | undefined> {
    for (const { scope, key, field } of this.keysOf(request)) {
      const row = await manager.findOneBy(IdempotencyKeyEntity, { senderId: request.caller.id, scope, key });
      if (!row) continue;
      if (row.requestHash !== hash) {
        throw new RelayError('duplicate_idempotency_key', 'This idempotency key was used with a different payload', { field, key });
      }
      const task = await this.loadTask(manager, row.taskId);
      const [message]: MessageRow[] = await manager.query(`SELECT * FROM "tasks"."messages" WHERE "task_id" = $1 AND "sequence_no" = $2`, [
        row.taskId,
        row.sequenceNo,
      ]);
      const unread = await this.unreadCount(manager, task.id, request.caller.id);
      return {
        task: await this.view(manager, task, request.history_length, unread),
        message: toMessageRef(message),
        created: row.createdTask,
        idempotent_replay: true,
      };
    }
    return undefined;
  }

  private async rememberKeys(manager: EntityManager, request: SendRequest, hash: string, message: MessageRow, createdTask: boolean): Promise<void> {
    for (const { scope, key } of this.keysOf(request)) {
      await manager.insert(IdempotencyKeyEntity, {
        senderId: request.caller.id,
        scope,
        key,
        requestHash: hash,
        taskId: message.task_id,
        sequenceNo: message.sequence_no,
        createdTask,
      });
    }
  }

  private async loadTask(manager: EntityManager, taskId: string, forUpdate = false): Promise<TaskRow> {
    const [task]: TaskRow[] = await manager.query(`SELECT ${TASK_COLUMNS} FROM "tasks"."tasks" t WHERE t."id" = $1${forUpdate ? ' FOR UPDATE' : ''}`, [
      taskId.toUpperCase(),
    ]);
    if (!task) throw new RelayError('thread_not_found', `No thread with id ${taskId}`, { task_id: taskId });
    return task;
  }

  private async unreadCount(manager: EntityManager, taskId: string, callerId: string): Promise<number> {
    const [{ unread }] = await manager.query(
      `SELECT count(*)::int AS "unread" FROM "tasks"."messages" m
       WHERE m."task_id" = $1 AND m."author_id" <> $2
         AND m."sequence_no" > COALESCE((SELECT r."last_read_sequence_no" FROM "tasks"."read_cursors" r WHERE r."task_id" = $1 AND r."participant_id" = $2), 0)`,
      [taskId, callerId],
    );
    return unread;
  }

  /**
   * The task with its most recent `historyLength` messages (all when undefined), or the messages
   * after `afterSequenceNo`, within the reply's byte budget: the newest ones are kept, or with
   * `afterSequenceNo` the oldest ones (the caller pages on from the last one it got).
   */
  private async view(
    manager: EntityManager,
    task: TaskRow,
    historyLength: number | undefined,
    unread: number,
    afterSequenceNo?: number,
  ): Promise<TaskView> {
    const lowerBound = Math.max(afterSequenceNo ?? 0, historyLength === undefined ? 0 : task.message_count - historyLength);
    let messages: MessageRow[] = [];
    if (historyLength !== 0) {
      const [row]: Array<{ messages: JsonMessage[] }> = await manager.query(`SELECT ${messagesWithinBudgetSql('$1', '$2', '$3')} AS "messages"`, [
        task.id,
        lowerBound,
        afterSequenceNo !== undefined,
      ]);
      messages = row.messages.map(messageFromJson);
    }
    const artifacts: ArtifactRow[] = await manager.query(`SELECT * FROM "tasks"."artifacts" WHERE "task_id" = $1 ORDER BY "position"`, [task.id]);
    return toTaskView(task, messages, artifacts, unread);
  }
}

/** How many of the list's parameters the filter clauses (without the cursor) use. */
function countParams(clauses: string[]): number {
  let highest = 1;
  for (const clause of clauses) for (const match of clause.matchAll(/\$(\d+)/g)) highest = Math.max(highest, Number(match[1]));
  return highest;
}
