import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { RelayError, type DeliveryChannel, type DeliveryDetail, type DeliveryStatus, type DeliveryView, type ListDeliveriesRequest } from '@app/contracts';
import { openJsonValues, SecretCipher, SecretDecryptionError, sealJsonValues, type SealedColumn } from '@app/secrets';
import { DeliveryAttemptEntity } from './delivery-attempt.entity';
import type { PlannedDelivery } from './delivery-planner';

/** A delivery as the worker needs it. */
export interface DeliveryRow {
  id: string;
  event_id: string;
  task_id: string;
  event: string;
  channel: DeliveryChannel;
  target_handle: string;
  target_ref: string;
  url: string;
  content_type: string;
  headers: Record<string, string>;
  body: unknown;
  status: DeliveryStatus;
  attempts: number;
  round_attempts: number;
  next_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

export interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** Succeeded, retry after `retryInMs`, or dead (retryInMs null and not ok). */
  ok: boolean;
  retryInMs: number | null;
}

const TABLE = '"notifier"."deliveries"';

/** Each header value of a delivery (a push config's authorization and token) is stored sealed. */
export const DELIVERY_SEALED_COLUMNS: SealedColumn[] = [{ table: TABLE, keyColumns: ['id'], column: 'headers', kind: 'json-values' }];

/** TypeORM answers an UPDATE … RETURNING on Postgres with `[rows, rowCount]`. */
function updatedRows<T>(result: unknown): T[] {
  return (result as [T[], number])[0];
}

function targetHost(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return 'invalid';
  }
}

export function toDeliveryView(row: DeliveryRow): DeliveryView {
  return {
    id: row.id,
    event_id: row.event_id,
    task_id: row.task_id,
    event: row.event,
    channel: row.channel,
    target_handle: row.target_handle,
    target_host: targetHost(row.url),
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    next_attempt_at: row.next_attempt_at ? new Date(row.next_attempt_at).toISOString() : null,
    created_at: new Date(row.created_at).toISOString(),
    delivered_at: row.delivered_at ? new Date(row.delivered_at).toISOString() : null,
  };
}

/** The delivery log: each delivery is recorded here before it is attempted, with every attempt. */
@Injectable()
export class DeliveriesService {
  private readonly logger = new Logger(DeliveriesService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
  ) {}

  /**
   * Records the deliveries of one event. Recording the same event again (a redelivered JetStream
   * message) adds nothing: a delivery is unique per event, channel and target.
   */
  async record(eventId: string, taskId: string, planned: PlannedDelivery[]): Promise<number> {
    return this.dataSource.transaction((manager) => this.recordIn(manager, eventId, taskId, planned));
  }

  private async recordIn(manager: EntityManager, eventId: string, taskId: string, planned: PlannedDelivery[]): Promise<number> {
    let inserted = 0;
    for (const delivery of planned) {
      const rows = (await manager.query(
        `INSERT INTO ${TABLE} ("id", "event_id", "task_id", "event", "channel", "target_handle", "target_ref", "url", "content_type", "headers", "body", "status", "next_attempt_at")
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'pending', now())
         ON CONFLICT ("event_id", "channel", "target_handle", "target_ref") DO NOTHING
         RETURNING "id"`,
        [
          randomUUID(),
          eventId,
          taskId,
          delivery.event,
          delivery.channel,
          delivery.target_handle,
          delivery.target_ref,
          delivery.url,
          delivery.content_type,
          JSON.stringify(sealJsonValues(this.cipher, delivery.headers)),
          JSON.stringify(delivery.body),
        ],
      )) as unknown[];
      inserted += rows.length;
    }
    return inserted;
  }

  /**
   * Leases up to `limit` due deliveries to this process for `leaseMs`. A process that dies
   * holding a lease loses it when the lease runs out, and the delivery is attempted again.
   */
  async claimDue(limit: number, leaseMs: number): Promise<DeliveryRow[]> {
    const claimed = updatedRows<DeliveryRow>(await this.dataSource.query(
      `UPDATE ${TABLE} d SET "locked_until" = now() + make_interval(secs => $2::double precision / 1000), "updated_at" = now()
       WHERE d."id" IN (
         SELECT "id" FROM ${TABLE}
         WHERE "status" IN ('pending', 'failed') AND "next_attempt_at" <= now() AND ("locked_until" IS NULL OR "locked_until" < now())
         ORDER BY "next_attempt_at", "created_at"
         LIMIT $1
         FOR UPDATE SKIP LOCKED)
       RETURNING d.*`,
      [limit, leaseMs],
    ));
    const ready: DeliveryRow[] = [];
    for (const row of claimed) {
      try {
        ready.push({ ...row, headers: openJsonValues(this.cipher, row.headers) });
      } catch (error) {
        if (!(error instanceof SecretDecryptionError)) throw error;
        await this.deadLetterUnreadable(row.id, error.message);
      }
    }
    return ready;
  }

  /**
   * A delivery whose headers were sealed with a key RELAY_SECRET_KEYS no longer lists cannot be
   * sent: it becomes a dead letter saying why (redeliver it once the key is listed again).
   */
  private async deadLetterUnreadable(id: string, reason: string): Promise<void> {
    this.logger.error({ delivery_id: id, reason }, 'delivery headers cannot be opened: dead letter');
    await this.dataSource.query(
      `UPDATE ${TABLE} SET "status" = 'dead', "next_attempt_at" = NULL, "locked_until" = NULL, "last_error" = $2, "updated_at" = now() WHERE "id" = $1`,
      [id, reason],
    );
  }

  /** Records one attempt and its consequence, and gives the lease back. */
  async recordAttempt(delivery: DeliveryRow, outcome: AttemptOutcome): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const attemptNo = delivery.attempts + 1;
      await manager.getRepository(DeliveryAttemptEntity).insert({
        deliveryId: delivery.id,
        attemptNo,
        statusCode: outcome.statusCode,
        error: outcome.error?.slice(0, 1000) ?? null,
        durationMs: outcome.durationMs,
      });
      const status: DeliveryStatus = outcome.ok ? 'succeeded' : outcome.retryInMs !== null ? 'failed' : 'dead';
      await manager.query(
        `UPDATE ${TABLE} SET
           "status" = $2::varchar, "attempts" = "attempts" + 1, "round_attempts" = "round_attempts" + 1,
           "last_status_code" = $3, "last_error" = $4,
           "next_attempt_at" = CASE WHEN $2::varchar = 'failed' THEN now() + make_interval(secs => $5::double precision / 1000) ELSE NULL END,
           "delivered_at" = CASE WHEN $2::varchar = 'succeeded' THEN now() ELSE NULL END,
           "locked_until" = NULL, "updated_at" = now()
         WHERE "id" = $1`,
        [delivery.id, status, outcome.statusCode, outcome.ok ? null : (outcome.error?.slice(0, 1000) ?? null), outcome.retryInMs ?? 0],
      );
    });
  }

  /** Puts a delivery back without attempting it (throttled), due at `dueInMs`. */
  async postpone(id: string, dueInMs: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE ${TABLE} SET "next_attempt_at" = now() + make_interval(secs => $2::double precision / 1000), "locked_until" = NULL, "updated_at" = now()
       WHERE "id" = $1 AND "status" IN ('pending', 'failed')`,
      [id, dueInMs],
    );
  }

  /** Gives back leases this process holds (on shutdown), so another process can attempt them at once. */
  async release(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.dataSource.query(`UPDATE ${TABLE} SET "locked_until" = NULL WHERE "id" = ANY($1::uuid[]) AND "status" IN ('pending', 'failed')`, [ids]);
  }

  /** Removes finished deliveries (succeeded or dead) last touched more than `days` ago, with their attempts. */
  async purgeOlderThan(days: number): Promise<number> {
    const result = (await this.dataSource.query(
      `DELETE FROM ${TABLE} WHERE "status" IN ('succeeded', 'dead') AND "updated_at" < now() - make_interval(days => $1)`,
      [days],
    )) as [unknown[], number];
    return result[1];
  }

  async list(request: ListDeliveriesRequest): Promise<DeliveryView[]> {
    const conditions: string[] = [];
    const params: unknown[] = [];
    if (request.status) {
      params.push(request.status);
      conditions.push(`"status" = $${params.length}`);
    }
    if (request.task_id) {
      params.push(request.task_id);
      conditions.push(`"task_id" = $${params.length}`);
    }
    params.push(request.limit ?? 50);
    const rows = (await this.dataSource.query(
      `SELECT * FROM ${TABLE} ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''} ORDER BY "created_at" DESC, "id" LIMIT $${params.length}`,
      params,
    )) as DeliveryRow[];
    return rows.map(toDeliveryView);
  }

  async detail(id: string): Promise<DeliveryDetail> {
    const [row] = (await this.dataSource.query(`SELECT * FROM ${TABLE} WHERE "id" = $1`, [id])) as DeliveryRow[];
    if (!row) throw new RelayError('delivery_not_found', undefined, { id });
    const attempts = await this.dataSource.getRepository(DeliveryAttemptEntity).find({ where: { deliveryId: id }, order: { attemptNo: 'ASC', id: 'ASC' } });
    return {
      ...toDeliveryView(row),
      attempt_log: attempts.map((attempt) => ({
        attempt_no: attempt.attemptNo,
        status_code: attempt.statusCode,
        error: attempt.error,
        duration_ms: attempt.durationMs,
        attempted_at: attempt.attemptedAt.toISOString(),
      })),
    };
  }

  /**
   * Sends a delivery again, whatever its status: it becomes pending, due now, with a fresh retry
   * schedule. The receiver sees the same `webhook-id`.
   */
  async redeliver(id: string): Promise<DeliveryView> {
    const updated = updatedRows<DeliveryRow>(await this.dataSource.query(
      `UPDATE ${TABLE} SET "status" = 'pending', "next_attempt_at" = now(), "round_attempts" = 0, "delivered_at" = NULL, "locked_until" = NULL, "updated_at" = now()
       WHERE "id" = $1 RETURNING *`,
      [id],
    ));
    if (updated.length === 0) throw new RelayError('delivery_not_found', undefined, { id });
    return toDeliveryView(updated[0]);
  }
}
