import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import {
  RelayError,
  REDELIVER_MANY_LIMIT,
  type DeliveryChannel,
  type DeliveryDetail,
  type DeliveryStatus,
  type DeliveryView,
  type FailureCountsReply,
  type ListDeliveriesRequest,
  type RedeliverManyRequest,
} from '@app/contracts';
import { pgPoolOf } from '@app/database';
import { openJsonValues, SecretCipher, SecretDecryptionError, sealJsonValues, type SealedColumn } from '@app/secrets';
import { DeliveryAttemptEntity } from './delivery-attempt.entity';
import type { DeliveryAssertionFacts } from './delivery-assertion';
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
  /** The URL's host and port. */
  destination: string;
  /** The owner agent's request timeout; null: RELAY_WEBHOOK_TIMEOUT_MS. */
  timeout_ms: number | null;
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
  /** What its assertion states (docs/chains.md#who-asked-signed); null on Slack deliveries and those recorded before. */
  assertion: DeliveryAssertionFacts | null;
  /** The target agent's signing secret, read with the lease (webhook deliveries). */
  webhook_secret?: string | null;
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

/** The error shown for an attempt whose process stopped before its outcome was known. */
const INTERRUPTED_ATTEMPT = 'interrupted: the notifier stopped before the outcome was known (the receiver may have got it)';

/** Batches of up to this many deliveries are recorded by a statement prepared for their size; larger ones are planned anew. */
const PREPARED_RECORD_SIZES = 8;

/** The error of a delivery given up while its destination's breaker held it. */
const HELD_TOO_LONG = 'dead: its destination did not answer (circuit breaker open) for longer than the retry schedule spans';

/** Each header value of a delivery (a push config's authorization and token) is stored sealed, and so is the URL of a notice to an org's approvals channel. */
export const DELIVERY_SEALED_COLUMNS: SealedColumn[] = [
  { table: TABLE, keyColumns: ['id'], column: 'headers', kind: 'json-values' },
  { table: TABLE, keyColumns: ['id'], column: 'url', kind: 'text', onlySealed: true },
];

/** What a claim may take: see `DeliveriesService.claimDue`. */
export interface ClaimRequest {
  limit: number;
  /** The timeout of a delivery without one of its own (RELAY_WEBHOOK_TIMEOUT_MS). */
  defaultTimeoutMs: number;
  perDestination: number;
  perOwner: number;
  /** The share of an upstream agent's deliveries (its destination and owner), in place of both. */
  perUpstream: number;
  /** Slots left for destinations and owners this process has deliveries in flight to (or probes); others have the whole share. */
  destinationSlots: Record<string, number>;
  ownerSlots: Record<string, number>;
  /** Slots left for the upstream deliveries of orgs with an upstream-in-flight quota (docs/orgs.md#quotas); others have no org limit. */
  orgSlots: Record<string, number>;
  /** Destinations not to attempt now, with ms until they may be attempted again. */
  held: Record<string, number>;
  /** A delivery held this long after it was recorded becomes a dead letter rather than wait on. */
  heldAtMostMs: number;
}

/** A delivery recorded leased to this process with its first attempt begun (`recordMany`). */
export interface BegunDelivery {
  delivery: DeliveryRow;
  attemptId: string;
  planned: PlannedDelivery;
}

/** The deliveries planned for one task event. */
export interface EventDeliveries {
  eventId: string;
  taskId: string;
  planned: PlannedDelivery[];
}

/** TypeORM answers an UPDATE … RETURNING on Postgres with `[rows, rowCount]`. */
function updatedRows<T>(result: unknown): T[] {
  return (result as [T[], number])[0];
}

/**
 * The destination of a URL as deliveries share slots and circuit breakers: its host and port
 * (`example.com`, `10.0.0.1:8443`; a default port is left out), lowercase.
 */
export function destinationOf(url: string): string {
  try {
    return new URL(url).host || 'invalid';
  } catch {
    return 'invalid';
  }
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

/** A write made in the statement that records an attempt's outcome: its statement's name and text, its parameters numbered from `firstParameter`. */
export interface WrittenWithAttempt {
  insert(firstParameter: number): { name: string; text: string; values: unknown[] };
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
   * Records the deliveries of a batch of events in one statement. Recording an event again (a
   * redelivered JetStream message) adds nothing: a delivery is unique per event, channel and target.
   * A delivery `leased` names (with its lease in ms) is recorded leased to this process with its
   * first attempt begun (as `claimDue` and `beginAttempt` would), for the worker to send at once.
   * Returns the channel of each delivery it inserted, and the leased ones it inserted as the worker reads them.
   */
  async recordMany(
    events: EventDeliveries[],
    leased: ReadonlyMap<PlannedDelivery, number> = new Map(),
  ): Promise<{ channels: DeliveryChannel[]; begun: BegunDelivery[] }> {
    const values: string[] = [];
    const params: unknown[] = [];
    const leasedById = new Map<string, { planned: PlannedDelivery; eventId: string; taskId: string }>();
    for (const { eventId, taskId, planned } of events) {
      for (const delivery of planned) {
        const base = params.length;
        const id = randomUUID();
        const leaseMs = leased.get(delivery);
        if (leaseMs !== undefined) leasedById.set(id, { planned: delivery, eventId, taskId });
        const lease = `$${base + 15}::integer`;
        values.push(
          `(${Array.from({ length: 14 }, (_, i) => `$${base + i + 1}`).join(', ')}, 'pending', now(),
            CASE WHEN ${lease} IS NULL THEN NULL ELSE now() + make_interval(secs => ${lease} / 1000.0) END,
            CASE WHEN ${lease} IS NULL THEN 0 ELSE 1 END, CASE WHEN ${lease} IS NULL THEN 0 ELSE 1 END)`,
        );
        params.push(
          id,
          eventId,
          taskId,
          delivery.event,
          delivery.channel,
          delivery.target_handle,
          delivery.target_ref,
          delivery.sealed_url ? this.cipher.seal(delivery.url) : delivery.url,
          destinationOf(delivery.url),
          delivery.timeout_ms ?? null,
          delivery.content_type,
          JSON.stringify(sealJsonValues(this.cipher, delivery.headers)),
          JSON.stringify(delivery.body),
          delivery.assertion ? JSON.stringify(delivery.assertion) : null,
          leaseMs === undefined ? null : Math.ceil(leaseMs),
        );
      }
    }
    if (values.length === 0) return { channels: [], begun: [] };
    const { rows } = await pgPoolOf(this.dataSource).query<{ id: string; channel: DeliveryChannel; created_at: Date; attempt_id: string | null }>({
      // A batch of a few deliveries (most events have one) is prepared once per size and connection.
      ...(values.length <= PREPARED_RECORD_SIZES ? { name: `notifier-record-deliveries-${values.length}` } : {}),
      text: `WITH inserted AS (
         INSERT INTO ${TABLE} ("id", "event_id", "task_id", "event", "channel", "target_handle", "target_ref", "url", "destination", "timeout_ms", "content_type", "headers", "body", "assertion",
           "status", "next_attempt_at", "locked_until", "attempts", "round_attempts")
         VALUES ${values.join(', ')}
         ON CONFLICT ("event_id", "channel", "target_handle", "target_ref") DO NOTHING
         RETURNING "id", "channel", "locked_until", "created_at"
       ), begun AS (
         INSERT INTO "notifier"."delivery_attempts" ("delivery_id", "attempt_no") SELECT "id", 1 FROM inserted WHERE "locked_until" IS NOT NULL
         RETURNING "id", "delivery_id"
       )
       SELECT inserted."id", inserted."channel", inserted."created_at", begun."id" AS "attempt_id" FROM inserted LEFT JOIN begun ON begun."delivery_id" = inserted."id"`,
      values: params,
    });
    const begun: BegunDelivery[] = [];
    for (const row of rows) {
      const leasedDelivery = leasedById.get(row.id);
      if (!leasedDelivery || row.attempt_id === null) continue;
      const { planned, eventId, taskId } = leasedDelivery;
      begun.push({
        attemptId: row.attempt_id,
        planned,
        delivery: {
          id: row.id,
          event_id: eventId,
          task_id: taskId,
          event: planned.event,
          channel: planned.channel,
          target_handle: planned.target_handle,
          target_ref: planned.target_ref,
          url: planned.url,
          destination: destinationOf(planned.url),
          timeout_ms: planned.timeout_ms ?? null,
          content_type: planned.content_type,
          headers: planned.headers,
          body: planned.body,
          status: 'pending',
          attempts: 0,
          round_attempts: 0,
          next_attempt_at: null,
          last_status_code: null,
          last_error: null,
          created_at: row.created_at,
          delivered_at: null,
          assertion: planned.assertion ?? null,
        },
      });
    }
    return { channels: rows.map((row) => row.channel), begun };
  }

  /**
   * Leases due deliveries to this process, fairly: at most `limit`, no destination or owner past
   * the slots it has left (`perDestination` / `perOwner`, less what this process has in flight
   * there, as `destinationSlots` / `ownerSlots` say), taken in turns (each destination's and
   * owner's first due delivery, then their second, …) rather than oldest first, so one slow
   * destination's backlog never stands in front of anyone else's. What is not taken stays pending
   * for a later claim. An org with an upstream-in-flight quota gets no more of its upstream
   * deliveries than its `orgSlots` (its oldest first). The due deliveries of `held` destinations (an open circuit breaker: ms until
   * its probe) are moved to the probe's time without an attempt, or become dead letters once they
   * are older than `heldAtMostMs` (the span of the retry schedule). A lease lasts one and a half
   * times the delivery's timeout and a second; a process that dies holding one loses it then.
   * Also says how long until a delivery not yet due may become due (a retry, a lease running out),
   * null when none: the worker sleeps until then, or until an attempt of its own ends; and whether
   * due deliveries were left for want of a slot (`leftDue`: an attempt ending may make room for them).
   */
  async claimDue(
    request: ClaimRequest,
  ): Promise<{ claimed: DeliveryRow[]; nextDueMs: number | null; deferred: number; expired: DeliveryChannel[]; leftDue: boolean }> {
    const [row] = (await this.dataSource.query(
      `WITH deferred AS (
         UPDATE ${TABLE} d SET "next_attempt_at" = now() + make_interval(secs => held.value::double precision / 1000), "updated_at" = now()
         FROM jsonb_each_text($7::jsonb) held
         WHERE d."destination" = held.key AND d."status" IN ('pending', 'failed') AND d."next_attempt_at" <= now()
           AND (d."locked_until" IS NULL OR d."locked_until" < now())
           AND d."created_at" >= now() - make_interval(secs => $8::double precision / 1000)
         RETURNING d."id"
       ), expired AS (
         UPDATE ${TABLE} d SET "status" = 'dead', "next_attempt_at" = NULL, "last_error" = $9, "updated_at" = now()
         FROM jsonb_each_text($7::jsonb) held
         WHERE d."destination" = held.key AND d."status" IN ('pending', 'failed') AND d."next_attempt_at" <= now()
           AND (d."locked_until" IS NULL OR d."locked_until" < now())
           AND d."created_at" < now() - make_interval(secs => $8::double precision / 1000)
         RETURNING d."channel"
       ), ready AS (
         SELECT "id", "channel", "destination", "target_handle", "next_attempt_at", "created_at",
           row_number() OVER (PARTITION BY "destination" ORDER BY "next_attempt_at", "created_at", "id") AS "destination_turn",
           row_number() OVER (PARTITION BY "channel", split_part("target_handle", '@', 2) ORDER BY "next_attempt_at", "created_at", "id") AS "org_turn"
         FROM ${TABLE}
         WHERE "status" IN ('pending', 'failed') AND "next_attempt_at" <= now() AND ("locked_until" IS NULL OR "locked_until" < now())
           AND NOT ($7::jsonb ? "destination")
       ), within_destination AS (
         SELECT *, row_number() OVER (PARTITION BY "target_handle" ORDER BY "next_attempt_at", "created_at", "id") AS "owner_turn"
         FROM ready WHERE "destination_turn" <= COALESCE(($5::jsonb ->> "destination")::int, CASE WHEN "channel" = 'upstream' THEN $10::int ELSE $3::int END)
       ), fair AS (
         SELECT "id" FROM within_destination
         WHERE "owner_turn" <= COALESCE(($6::jsonb ->> "target_handle")::int, CASE WHEN "channel" = 'upstream' THEN $10::int ELSE $4::int END)
           AND ("channel" <> 'upstream' OR "org_turn" <= COALESCE(($11::jsonb ->> split_part("target_handle", '@', 2))::int, "org_turn"))
         ORDER BY GREATEST("destination_turn", "owner_turn"), "next_attempt_at", "created_at", "id"
         LIMIT $1
       ), due AS (
         SELECT d."id" FROM ${TABLE} d JOIN fair ON fair."id" = d."id"
         WHERE d."status" IN ('pending', 'failed') AND (d."locked_until" IS NULL OR d."locked_until" < now())
         FOR UPDATE OF d SKIP LOCKED
       ), claimed AS (
         UPDATE ${TABLE} d SET "locked_until" = now() + make_interval(secs => (COALESCE(d."timeout_ms", $2) * 1.5 + 1000)::double precision / 1000), "updated_at" = now()
         FROM due WHERE d."id" = due."id"
         RETURNING d.*, (SELECT s."secret" FROM "notifier"."webhook_secrets" s WHERE s."handle" = d."target_handle") AS "webhook_secret"
       )
       SELECT
         (SELECT COALESCE(json_agg(claimed), '[]'::json) FROM claimed) AS "claimed",
         (SELECT count(*) FROM deferred)::int AS "deferred",
         (SELECT COALESCE(json_agg(expired."channel"), '[]'::json) FROM expired) AS "expired",
         (SELECT count(*) FROM ready)::int AS "ready",
         (SELECT (EXTRACT(EPOCH FROM (min(GREATEST(t."next_attempt_at", t."locked_until")) - now())) * 1000)::float8
          FROM ${TABLE} t WHERE t."status" IN ('pending', 'failed') AND GREATEST(t."next_attempt_at", t."locked_until") > now()) AS "next_due_ms"`,
      [
        request.limit,
        request.defaultTimeoutMs,
        request.perDestination,
        request.perOwner,
        JSON.stringify(request.destinationSlots),
        JSON.stringify(request.ownerSlots),
        JSON.stringify(request.held),
        request.heldAtMostMs,
        HELD_TOO_LONG,
        request.perUpstream,
        JSON.stringify(request.orgSlots),
      ],
    )) as Array<{ claimed: DeliveryRow[]; deferred: number; expired: DeliveryChannel[]; ready: number; next_due_ms: number | null }>;
    const ready: DeliveryRow[] = [];
    for (const claimed of row.claimed) {
      try {
        ready.push(this.opened(claimed));
      } catch (error) {
        if (!(error instanceof SecretDecryptionError)) throw error;
        await this.deadLetterUnreadable(claimed.id, error.message);
      }
    }
    return {
      claimed: ready,
      nextDueMs: row.next_due_ms === null ? null : Math.max(0, row.next_due_ms),
      deferred: row.deferred,
      expired: row.expired,
      leftDue: row.ready > row.claimed.length,
    };
  }

  /** The delivery with its header values, its agent's signing secret and a sealed URL opened. */
  private opened(row: DeliveryRow): DeliveryRow {
    return {
      ...row,
      url: SecretCipher.isSealed(row.url) ? this.cipher.open(row.url) : row.url,
      headers: openJsonValues(this.cipher, row.headers),
      webhook_secret: row.webhook_secret ? this.cipher.open(row.webhook_secret) : null,
    };
  }

  /** What the admin API shows of a delivery: a sealed URL (an org's approvals channel) opened for its scheme and host only. */
  private view(row: DeliveryRow): DeliveryView {
    if (!SecretCipher.isSealed(row.url)) return toDeliveryView(row);
    let url: string;
    try {
      url = this.cipher.open(row.url);
    } catch (error) {
      if (!(error instanceof SecretDecryptionError)) throw error;
      url = 'sealed:';
    }
    return toDeliveryView({ ...row, url });
  }

  /**
   * A delivery whose headers, URL or signing secret were sealed with a key RELAY_SECRET_KEYS no longer
   * lists cannot be sent: it becomes a dead letter saying why (redeliver it once the key is listed again).
   */
  private async deadLetterUnreadable(id: string, reason: string): Promise<void> {
    this.logger.error({ delivery_id: id, reason }, 'delivery secrets cannot be opened: dead letter');
    await this.dataSource.query(
      `UPDATE ${TABLE} SET "status" = 'dead', "next_attempt_at" = NULL, "locked_until" = NULL, "last_error" = $2, "updated_at" = now() WHERE "id" = $1`,
      [id, reason],
    );
  }

  /**
   * Records that an attempt starts, before its request is sent: the delivery counts it at once,
   * so a request that reached the receiver from a process that then died is in the log. An earlier
   * attempt left without an outcome (its process died) is marked so. Returns the attempt's id.
   */
  async beginAttempt(delivery: DeliveryRow): Promise<string> {
    const { rows } = await pgPoolOf(this.dataSource).query<{ id: string }>({
      name: 'notifier-begin-attempt',
      text: `WITH interrupted AS (
         UPDATE "notifier"."delivery_attempts" SET "error" = $2
         WHERE "delivery_id" = $1 AND "duration_ms" IS NULL AND "status_code" IS NULL AND "error" IS NULL
       ), counted AS (
         UPDATE ${TABLE} SET "attempts" = "attempts" + 1, "round_attempts" = "round_attempts" + 1, "updated_at" = now()
         WHERE "id" = $1 RETURNING "id", "attempts"
       )
       INSERT INTO "notifier"."delivery_attempts" ("delivery_id", "attempt_no") SELECT "id", "attempts" FROM counted
       RETURNING "id"`,
      values: [delivery.id, INTERRUPTED_ATTEMPT],
    });
    if (rows.length === 0) throw new RelayError('delivery_not_found', undefined, { id: delivery.id });
    return rows[0].id;
  }

  /**
   * Records the outcome of the attempt `attemptId` and its consequence, and gives the lease back;
   * with `alongside` (a data-modifying statement with RETURNING, its parameters numbered from the
   * one it is given), in the same statement, answering the rows it returned.
   */
  async finishAttempt(delivery: DeliveryRow, attemptId: string, outcome: AttemptOutcome, alongside?: WrittenWithAttempt): Promise<unknown[]> {
    const status: DeliveryStatus = outcome.ok ? 'succeeded' : outcome.retryInMs !== null ? 'failed' : 'dead';
    const error = outcome.error?.slice(0, 1000) ?? null;
    const values = [
      delivery.id,
      status,
      outcome.statusCode,
      outcome.ok ? null : error,
      outcome.retryInMs ?? 0,
      error,
      Math.round(outcome.durationMs),
      attemptId,
    ];
    const finished = `UPDATE ${TABLE} SET
         "status" = $2::varchar,
         "last_status_code" = $3, "last_error" = $4,
         "next_attempt_at" = CASE WHEN $2::varchar = 'failed' THEN now() + make_interval(secs => $5::double precision / 1000) ELSE NULL END,
         "delivered_at" = CASE WHEN $2::varchar = 'succeeded' THEN now() ELSE NULL END,
         "locked_until" = NULL, "updated_at" = now()
       WHERE "id" = $1`;
    const attempt = `WITH attempt AS (
         UPDATE "notifier"."delivery_attempts" SET "status_code" = $3, "error" = $6, "duration_ms" = $7
         WHERE "id" = $8
       )`;
    if (!alongside) {
      await pgPoolOf(this.dataSource).query({ name: 'notifier-finish-attempt', text: `${attempt}\n       ${finished}`, values });
      return [];
    }
    const part = alongside.insert(values.length + 1);
    const { rows } = await pgPoolOf(this.dataSource).query({
      name: `notifier-finish-attempt-with-${part.name}`,
      text: `${attempt}, finished AS (
         ${finished}
       ), alongside AS (
         ${part.text}
       )
       SELECT * FROM alongside`,
      values: [...values, ...part.values],
    });
    return rows;
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
    if (request.orgs !== undefined) {
      params.push(request.orgs);
      conditions.push(`split_part("target_handle", '@', 2) = ANY($${params.length}::text[])`);
    }
    params.push(request.limit ?? 50);
    const rows = (await this.dataSource.query(
      `SELECT * FROM ${TABLE} ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''} ORDER BY "created_at" DESC, "id" LIMIT $${params.length}`,
      params,
    )) as DeliveryRow[];
    return rows.map((row) => this.view(row));
  }

  async detail(id: string): Promise<DeliveryDetail> {
    const [row] = (await this.dataSource.query(`SELECT * FROM ${TABLE} WHERE "id" = $1`, [id])) as DeliveryRow[];
    if (!row) throw new RelayError('delivery_not_found', undefined, { id });
    const attempts = await this.dataSource.getRepository(DeliveryAttemptEntity).find({ where: { deliveryId: id }, order: { attemptNo: 'ASC', id: 'ASC' } });
    return {
      ...this.view(row),
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
    const updated = updatedRows<DeliveryRow>(
      await this.dataSource.query(
        `UPDATE ${TABLE} SET "status" = 'pending', "next_attempt_at" = now(), "round_attempts" = 0, "delivered_at" = NULL, "locked_until" = NULL, "updated_at" = now()
       WHERE "id" = $1 RETURNING *`,
        [id],
      ),
    );
    if (updated.length === 0) throw new RelayError('delivery_not_found', undefined, { id });
    return this.view(updated[0]);
  }

  /**
   * Sends again, like `redeliver`, up to REDELIVER_MANY_LIMIT deliveries of a status (optionally of
   * one task), the oldest first, in one statement. Returns how many.
   */
  async redeliverMany(request: RedeliverManyRequest): Promise<number> {
    const params: unknown[] = [request.status, REDELIVER_MANY_LIMIT];
    const conditions = ['"status" = $1'];
    if (request.task_id !== undefined) {
      params.push(request.task_id);
      conditions.push(`"task_id" = $${params.length}`);
    }
    if (request.orgs !== undefined) {
      params.push(request.orgs);
      conditions.push(`split_part("target_handle", '@', 2) = ANY($${params.length}::text[])`);
    }
    const result = (await this.dataSource.query(
      `UPDATE ${TABLE} SET "status" = 'pending', "next_attempt_at" = now(), "round_attempts" = 0, "delivered_at" = NULL, "locked_until" = NULL, "updated_at" = now()
       WHERE "id" IN (
         SELECT "id" FROM ${TABLE} WHERE ${conditions.join(' AND ')}
         ORDER BY "created_at", "id" LIMIT $2 FOR UPDATE SKIP LOCKED
       )`,
      params,
    )) as [unknown[], number];
    return result[1];
  }

  /** Failed and dead deliveries, of the whole relay or (`orgs`) to agents of those orgs. */
  async failureCounts(orgs?: string[]): Promise<FailureCountsReply> {
    const rows = (await this.dataSource.query(
      `SELECT count(*) FILTER (WHERE "status" = 'failed')::int AS "failed", count(*) FILTER (WHERE "status" = 'dead')::int AS "dead"
       FROM ${TABLE} WHERE "status" IN ('failed', 'dead') AND ($1::text[] IS NULL OR split_part("target_handle", '@', 2) = ANY($1::text[]))`,
      [orgs ?? null],
    )) as FailureCountsReply[];
    return rows[0];
  }
}
