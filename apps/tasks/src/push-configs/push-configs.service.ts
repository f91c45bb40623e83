import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import {
  PUSH_CONFIG_EVENTS,
  PUSH_CONFIG_LIMITS,
  RelayError,
  type DeletePushConfigReply,
  type DeletePushConfigRequest,
  type GetPushConfigRequest,
  type ListPushConfigsRequest,
  type PushConfigEvent,
  type PushConfigListReply,
  type PushConfigTaskRequest,
  type WireVersion,
  type PushConfigView,
  type PushTargetReply,
  type PushTargetRequest,
  type SetPushConfigRequest,
} from '@app/contracts';
import { currentTraceParent } from '@app/tracing';
import { NotifierSealer, SecretCipher, type SealedColumn } from '@app/secrets';
import { COMMITTED_EVENTS, committedRows, earlierUnpublishedSql, OWN_POSITIONS_SQL, type CommittedEvents, type OutboxRow } from '../outbox/committed-events';
import { partyOf } from '../tasks/rules/state-machine';
import { TasksConfig } from '../tasks.config';

interface PushConfigRow {
  task_id: string;
  id: string;
  owner_id: string;
  owner_handle: string;
  version: WireVersion;
  url: string;
  token: string | null;
  auth_schemes: string[] | null;
  auth_credentials: string | null;
}

const COLUMNS = `"task_id", "id", "owner_id", "owner_handle", "version", "url", "token", "auth_schemes", "auth_credentials"`;

/**
 * A config's event into the outbox, in the transaction that holds the task's row (taken by an
 * earlier statement, so this one sees every change of the task committed before it).
 */
const WRITE_PUSH_CONFIG_EVENT_SQL = `
WITH outbox AS (
  INSERT INTO "tasks"."outbox_events" ("id", "subject", "type", "task_id", "payload", "trace_parent") VALUES ($1, $2, $3, $4, $5::jsonb, $6)
  RETURNING "id", "position"
)
SELECT ${earlierUnpublishedSql('$4::text')} AS "earlier_events", ${OWN_POSITIONS_SQL} AS "event_positions"`;

/** The token and credentials are stored sealed (AES-256-GCM under RELAY_SECRET_KEYS). */
export const PUSH_CONFIG_SEALED_COLUMNS: SealedColumn[] = [
  { table: '"tasks"."push_configs"', keyColumns: ['task_id', 'owner_id', 'id'], column: 'token', kind: 'text' },
  { table: '"tasks"."push_configs"', keyColumns: ['task_id', 'owner_id', 'id'], column: 'auth_credentials', kind: 'text' },
];

/** Secrets are never returned in full: at most their last four characters. */
export function maskSecret(value: string | null): string | null {
  if (value === null) return null;
  return value.length >= 12 ? `****${value.slice(-4)}` : '****';
}

/** The row with its token and credentials opened. */
function opened(cipher: SecretCipher, row: PushConfigRow): PushConfigRow {
  return { ...row, token: cipher.openNullable(row.token), auth_credentials: cipher.openNullable(row.auth_credentials) };
}

export function toPushConfigView(row: PushConfigRow): PushConfigView {
  return {
    id: row.id,
    task_id: row.task_id,
    url: row.url,
    token: maskSecret(row.token),
    authentication: row.auth_schemes ? { schemes: row.auth_schemes, credentials: maskSecret(row.auth_credentials) } : null,
  };
}

/**
 * A2A push-notification configs of a task. Only the task's participants may register them, each
 * has its own ids, sees and deletes only its own and holds at most 10 per task and
 * RELAY_PUSH_CONFIGS_PER_AGENT across its tasks, and every change goes to the outbox (in the same
 * transaction) for the notifier.
 */
@Injectable()
export class PushConfigsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
    @Inject(TasksConfig) private readonly config: TasksConfig,
    @Inject(NotifierSealer) private readonly sealer: NotifierSealer,
    @Inject(COMMITTED_EVENTS) private readonly committed: CommittedEvents,
  ) {}

  async set(request: SetPushConfigRequest): Promise<PushConfigView> {
    const { view, events } = await this.dataSource.transaction(async (manager) => {
      const taskId = await this.participantTask(manager, request, true);
      const id = request.config.id ?? randomUUID();
      // Ids and the quota are the caller's own: the other participant's configs neither count nor clash.
      const existing: PushConfigRow[] = await manager.query(`SELECT ${COLUMNS} FROM "tasks"."push_configs" WHERE "task_id" = $1 AND "owner_id" = $2`, [
        taskId,
        request.caller.id,
      ]);
      const same = existing.find((row) => row.id === id);
      if (!same && existing.length >= PUSH_CONFIG_LIMITS.perParticipantAndTask) {
        throw new RelayError('push_config_limit', undefined, { task_id: taskId, limit: PUSH_CONFIG_LIMITS.perParticipantAndTask });
      }
      if (!same) await this.checkAgentQuota(manager, request.caller.id);
      const authentication = request.config.authentication;
      const [row]: PushConfigRow[] = await manager.query(
        `INSERT INTO "tasks"."push_configs" ("task_id", "id", "owner_id", "owner_handle", "version", "url", "token", "auth_schemes", "auth_credentials")
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT ("task_id", "owner_id", "id") DO UPDATE SET
           "version" = EXCLUDED."version", "url" = EXCLUDED."url", "token" = EXCLUDED."token",
           "auth_schemes" = EXCLUDED."auth_schemes", "auth_credentials" = EXCLUDED."auth_credentials", "updated_at" = now()
         RETURNING ${COLUMNS}`,
        [
          taskId,
          id,
          request.caller.id,
          request.caller.handle,
          request.version,
          request.config.url,
          this.cipher.sealNullable(request.config.token ?? null),
          authentication ? authentication.schemes : null,
          this.cipher.sealNullable(authentication?.credentials ?? null),
        ],
      );
      const written = await this.writeEvent(manager, row, false);
      return { view: toPushConfigView(opened(this.cipher, row)), events: written };
    });
    this.committed.publishCommitted(events);
    return view;
  }

  async get(request: GetPushConfigRequest): Promise<PushConfigView> {
    const taskId = await this.participantTask(this.dataSource.manager, request, false);
    const rows: PushConfigRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM "tasks"."push_configs" WHERE "task_id" = $1 AND "owner_id" = $2 ${request.config_id !== undefined ? 'AND "id" = $3' : ''}
       ORDER BY "created_at", "id" LIMIT 1`,
      request.config_id !== undefined ? [taskId, request.caller.id, request.config_id] : [taskId, request.caller.id],
    );
    if (rows.length === 0) throw new RelayError('push_config_not_found', undefined, { task_id: taskId, config_id: request.config_id ?? null });
    return toPushConfigView(opened(this.cipher, rows[0]));
  }

  async list(request: ListPushConfigsRequest): Promise<PushConfigListReply> {
    const taskId = await this.participantTask(this.dataSource.manager, request, false);
    const rows: PushConfigRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM "tasks"."push_configs" WHERE "task_id" = $1 AND "owner_id" = $2 ORDER BY "created_at", "id"`,
      [taskId, request.caller.id],
    );
    return { configs: rows.map((row) => toPushConfigView(opened(this.cipher, row))) };
  }

  /** Idempotent: deleting a config that is not there succeeds with `deleted: false`. */
  async delete(request: DeletePushConfigRequest): Promise<DeletePushConfigReply> {
    const { reply, events } = await this.dataSource.transaction(async (manager) => {
      const taskId = await this.participantTask(manager, request, true);
      const result = (await manager.query(`DELETE FROM "tasks"."push_configs" WHERE "task_id" = $1 AND "id" = $2 AND "owner_id" = $3 RETURNING ${COLUMNS}`, [
        taskId,
        request.config_id,
        request.caller.id,
      ])) as [PushConfigRow[], number];
      const [deleted] = result[0];
      const written = deleted ? await this.writeEvent(manager, deleted, true) : [];
      return { reply: { deleted: deleted !== undefined }, events: written };
    });
    this.committed.publishCommitted(events);
    return reply;
  }

  /** One config with its secrets sealed to the notifier's key, for the notifier that delivers to it (internal subject). */
  async target(request: PushTargetRequest): Promise<PushTargetReply> {
    const [row]: PushConfigRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM "tasks"."push_configs" WHERE "task_id" = $1 AND "owner_handle" = $2 AND "id" = $3 ORDER BY "updated_at" DESC LIMIT 1`,
      [request.task_id.toUpperCase(), request.owner, request.config_id],
    );
    if (!row) return { target: null };
    const config = opened(this.cipher, row);
    return {
      target: {
        version: config.version,
        url: config.url,
        sealed_token: config.token === null ? null : await this.sealer.seal(config.token),
        authentication: config.auth_schemes
          ? { schemes: config.auth_schemes, sealed_credentials: config.auth_credentials === null ? null : await this.sealer.seal(config.auth_credentials) }
          : null,
      },
    };
  }

  /**
   * Refuses a new config past the agent's quota across its tasks. Its sets are serialised by a
   * transaction lock on the agent, so two at once on different tasks cannot both take the last slot.
   */
  private async checkAgentQuota(manager: EntityManager, ownerId: string): Promise<void> {
    const limit = this.config.RELAY_PUSH_CONFIGS_PER_AGENT;
    // Two statements: a count in the locking statement would read the snapshot taken before the lock was granted.
    await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('tasks.push_configs:' || $1, 0))`, [ownerId]);
    const [{ held }]: Array<{ held: number }> = await manager.query(`SELECT count(*)::int AS "held" FROM "tasks"."push_configs" WHERE "owner_id" = $1`, [
      ownerId,
    ]);
    if (held >= limit) {
      throw new RelayError('push_config_limit', `You hold at most ${limit} push notification configs across your tasks`, { scope: 'agent', limit });
    }
  }

  /** The task's id when the caller takes part in it (on an endpoint: with that agent); the task row is locked for changes. */
  private async participantTask(manager: EntityManager, request: PushConfigTaskRequest, forUpdate: boolean): Promise<string> {
    const taskId = request.task_id;
    const [task]: Array<{ id: string; sender_id: string; recipient_id: string; hidden_from_recipient: boolean }> = await manager.query(
      `SELECT "id", "sender_id", "recipient_id", "hidden_from_recipient" FROM "tasks"."tasks" WHERE "id" = $1${forUpdate ? ' FOR UPDATE' : ''}`,
      [taskId.toUpperCase()],
    );
    if (!task) throw new RelayError('thread_not_found', `No task with id ${taskId}`, { task_id: taskId });
    partyOf(task, request.caller.id, request.counterpart_id);
    return task.id;
  }

  /** Writes the config's event to the outbox; answers it with the task's earlier events not published yet, to publish after the commit. */
  private async writeEvent(manager: EntityManager, row: PushConfigRow, deleted: boolean): Promise<OutboxRow[]> {
    const event: PushConfigEvent = {
      event_id: randomUUID(),
      task_id: row.task_id,
      config_id: row.id,
      owner: row.owner_handle,
      version: row.version,
      url: deleted ? null : row.url,
      deleted,
      occurred_at: new Date().toISOString(),
    };
    const subject = deleted ? PUSH_CONFIG_EVENTS.deleted : PUSH_CONFIG_EVENTS.set;
    const traceParent = currentTraceParent();
    const [written]: Array<{ earlier_events: OutboxRow[]; event_positions: Record<string, string> }> = await manager.query(WRITE_PUSH_CONFIG_EVENT_SQL, [
      event.event_id,
      subject,
      deleted ? 'push_config_deleted' : 'push_config_set',
      row.task_id,
      JSON.stringify(event),
      traceParent,
    ]);
    return committedRows(row.task_id, written.earlier_events, [{ id: event.event_id, subject, payload: event }], written.event_positions, traceParent);
  }
}
