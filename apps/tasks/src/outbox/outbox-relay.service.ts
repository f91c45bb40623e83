import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { prefixedSubject, relayEventCloudEventHeaders, TASK_EVENT_POSITION_HEADER } from '@app/contracts';
import { ensureEventStream, type JetStreamContext, natsInboxPrefix, openJetStream, publishWithMsgId, WakeableDelay } from '@app/messaging';
import type { CommittedEvents, OutboxRow } from './committed-events';
import { OUTBOX_PUBLISHED, OUTBOX_RELAY_OPTIONS, OUTBOX_TABLE, type OutboxRelayOptions } from './outbox.constants';

/** An unpublished row as the sweep reads it: `settled` once it is older than `settleMs`, no longer its writer's to publish. */
export interface UnpublishedRow extends OutboxRow {
  settled: boolean;
}

/** The first publish of a round that failed; the round stopped there. */
interface FailedPublish {
  row: UnpublishedRow;
  error: unknown;
}

/** How often a replica that does not relay checks whether the relaying one is gone. */
const STANDBY_RETRY_MS = 1000;

/** The longest a turn of publishes after commits waits for the previous turn's acknowledgements. */
const MAX_TURN_WAIT_MS = 20;

/**
 * The outbox rows not published yet, oldest first, leaving out the ones this process published and
 * has not marked yet or is publishing. Events of one task are written by transactions that hold its
 * row in turn, so position order is their order. The ORDER BY names the table's column: the
 * position selected as text would sort 10 before 9.
 */
const UNPUBLISHED_SQL = `
SELECT id, position::text AS position, task_id, subject, payload, trace_parent, created_at <= now() - make_interval(secs => $3::float8 / 1000) AS settled
FROM ${OUTBOX_TABLE}
WHERE NOT (${OUTBOX_PUBLISHED}) AND NOT (id = ANY($2::uuid[]))
ORDER BY outbox_events.position
LIMIT $1`;

/**
 * Publishes the tasks service's events to JetStream. The process that commits an event publishes it
 * right after the commit (`publishCommitted`); the outbox is the safety net: one replica at a time
 * sweeps it every `pollIntervalMs` for events older than `settleMs` that are still unpublished (their
 * writer died or its publish failed) and publishes them. Either way a task's event goes out only
 * once every earlier one of its task is acknowledged, and `Nats-Msg-Id` = the event id makes an
 * event both publish one message on the stream.
 */
@Injectable()
export class OutboxRelayService implements CommittedEvents, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(OutboxRelayService.name);
  private jetStream: JetStreamContext | null = null;
  private streamReady = false;
  /** The session that holds the relay's advisory lock while this replica relays. */
  private lockSession: pg.Client | null = null;
  /** Whether this replica holds the relay's lock and so publishes. */
  private leading = false;
  private nextLeadershipTry = 0;
  private reconnect: NodeJS.Timeout | null = null;
  private loop: Promise<void> | null = null;
  private stopping = false;
  private readonly delay = new WakeableDelay();
  private backoffMs = 0;
  /** Published, not yet marked so in the table. */
  private readonly unmarked = new Set<string>();
  /** Publishes under way in this process, by event id. */
  private readonly publishing = new Map<string, Promise<boolean>>();
  /** The last publish under way of each task: its next event waits for it. */
  private readonly taskTails = new Map<string, Promise<boolean>>();
  /** Events whose publish after the commit failed: the sweep takes them without waiting for them to settle. */
  private readonly abandoned = new Set<string>();
  private opening: Promise<JetStreamContext> | null = null;
  private closed = false;
  private markTimer: NodeJS.Timeout | null = null;
  private marking: Promise<void> | null = null;
  /** The next turn of publishes after commits: the connection they go out on, once the turn starts. */
  private turn: Promise<JetStreamContext> | null = null;
  /** Publishes of the last turns not acknowledged yet, and who waits for them to be. */
  private turnUnacknowledged = 0;
  private turnAcknowledged: (() => void) | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(OUTBOX_RELAY_OPTIONS) private readonly options: OutboxRelayOptions,
  ) {}

  onApplicationBootstrap(): void {
    this.stopping = false;
    this.closed = false;
    void this.openLockSession();
    this.loop = this.run();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    this.delay.interrupt();
    await this.loop;
    this.loop = null;
    await this.publishesUnderWay();
    await this.markPublished().catch(() => undefined);
    if (this.reconnect) clearTimeout(this.reconnect);
    const lockSession = this.lockSession;
    this.lockSession = null;
    this.leading = false;
    await lockSession?.end().catch(() => undefined);
    // A commit from now on leaves its events to the sweep of the next start (or of another replica).
    this.closed = true;
    const jetStream = this.jetStream;
    this.jetStream = null;
    if (jetStream && !jetStream.connection.isClosed()) await jetStream.connection.drain().catch(() => undefined);
  }

  /**
   * Publishes `rows` (oldest first: the earlier unpublished events of their tasks, then the ones
   * just committed) without waiting: each once the previous one of its task is acknowledged, an
   * event this process already published left out. A failed publish (counted in the row's
   * `attempts`, with its `last_error`) and the rest of its task are left to the sweep, which takes
   * them at once when this replica leads, and once they settled when another one does.
   */
  publishCommitted(rows: OutboxRow[]): void {
    for (const row of rows) {
      if (this.unmarked.has(row.id) || this.publishing.has(row.id)) continue;
      void this.publishAfter(
        () => this.nextTurn(),
        row,
        this.taskTails.get(row.task_id),
        (error) => {
          // Recorded before the sweep may take it, so that its publish clears the error.
          void (error !== undefined ? this.recordFailure(row, error) : Promise.resolve()).then(() => {
            this.abandoned.add(row.id);
            // Kept for the sweep of this replica once it leads; another replica's sweep takes them once they settled.
            if (this.abandoned.size > this.options.batchSize) this.abandoned.delete(this.abandoned.values().next().value as string);
            if (this.leading && this.backoffMs === 0) this.delay.wake();
          });
        },
      );
    }
  }

  /**
   * The turn a publish after a commit goes out in: the commits that end in the same turn of the
   * event loop go out together, in one write to the connection, once the previous turn's
   * publishes are acknowledged (or after MAX_TURN_WAIT_MS). So under load they leave in batches that
   * grow with the load, one acknowledgement round trip apart, and the stream's consumers read them
   * in batches; alone, an event leaves at the end of its commit's turn.
   */
  private nextTurn(): Promise<JetStreamContext> {
    this.turn ??= (async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.turnUnacknowledged > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, MAX_TURN_WAIT_MS);
          this.turnAcknowledged = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.turnAcknowledged = null;
      }
      const context = await this.jetStreamContext().finally(() => (this.turn = null));
      return context;
    })();
    return this.turn;
  }

  /** Waits for the publishes under way in this process (after commits, or of a sweep). */
  async publishesUnderWay(): Promise<void> {
    while (this.publishing.size > 0) await Promise.all([...this.publishing.values()]);
  }

  /** Sweeps one batch; returns how many rows it published. Exposed for tests and tooling. */
  async relayOnce(): Promise<number> {
    if (this.unmarked.size >= this.options.batchSize) {
      await this.markPublished();
      // Unmarked events are left out of every read: stop before their list grows past a batch.
      if (this.unmarked.size >= this.options.batchSize) throw new Error(`${this.unmarked.size} published outbox events could not be marked yet`);
    }
    const context = await this.jetStreamContext();
    const rows = this.settledTasks(await this.readUnpublished(this.options.batchSize, [...this.unmarked, ...this.publishing.keys()]));
    let failed: FailedPublish | null;
    try {
      failed = await this.publishAll(context, rows);
    } finally {
      if (this.unmarked.size > 0) this.scheduleMarks();
    }
    if (failed) {
      await this.recordFailure(failed.row, failed.error);
      throw failed.error;
    }
    if (this.unmarked.size >= this.options.batchSize) await this.markPublished();
    return rows.length;
  }

  /**
   * The rows of the tasks whose oldest unpublished event has settled (or whose publish after the
   * commit failed here), in order; a task whose oldest one is young is still its writer's, and
   * none of its events is taken, so that the sweep never sends one ahead of an earlier one.
   */
  private settledTasks(rows: UnpublishedRow[]): UnpublishedRow[] {
    const taken = new Set<string>();
    const left = new Set<string>();
    const read = new Set(rows.map((row) => row.id));
    // Published meanwhile by another replica, or past this batch (then it settles like any other).
    if (rows.length < this.options.batchSize) for (const id of this.abandoned) if (!read.has(id)) this.abandoned.delete(id);
    return rows.filter((row) => {
      if (taken.has(row.task_id)) return true;
      if (left.has(row.task_id)) return false;
      const settled = row.settled || this.abandoned.has(row.id);
      (settled ? taken : left).add(row.task_id);
      return settled;
    });
  }

  private async recordFailure(row: OutboxRow, error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    // The stream may have been removed or the connection replaced: check it again before the next publish.
    this.streamReady = false;
    await this.dataSource
      .query(`UPDATE ${OUTBOX_TABLE} SET attempts = attempts + 1, last_error = $2 WHERE id = $1`, [row.id, message.slice(0, 1000)])
      .catch(() => undefined);
  }

  /**
   * Reads on the lock's own session, as one prepared statement: through the pool each read would
   * cost several times more in this process.
   */
  protected async readUnpublished(limit: number, exclude: string[]): Promise<UnpublishedRow[]> {
    const lockSession = this.lockSession;
    if (!lockSession) throw new Error('the outbox relay lock session is not open');
    const { rows } = await lockSession.query<UnpublishedRow>({
      name: 'outbox-unpublished',
      text: UNPUBLISHED_SQL,
      values: [limit, exclude, this.options.settleMs],
    });
    return rows;
  }

  /**
   * Publishes `rows` in order with up to `publishConcurrency` acknowledgements awaited at once,
   * adding each acknowledged row to `unmarked`. After a failure nothing more is sent; the rows not
   * acknowledged stay unpublished for the next round, which reads them again in position order.
   *
   * A task's next event is sent only once its previous one is acknowledged. Had it been sent while
   * the previous one was in flight, the previous one could be lost (the connection dropped under
   * it) while this one lands: the retry would then put the previous one on the stream after it,
   * and the duplicate window would keep this one where it was.
   */
  private async publishAll(context: JetStreamContext, rows: UnpublishedRow[]): Promise<FailedPublish | null> {
    let failed: FailedPublish | null = null;
    const inFlight = new Set<Promise<boolean>>();
    for (const row of rows) {
      while (inFlight.size >= this.options.publishConcurrency && !failed) await Promise.race(inFlight);
      if (failed) break;
      // A row behind a failed one of its task stays unpublished for the next round.
      const publish = this.publishAfter(context, row, this.taskTails.get(row.task_id), (error) => {
        if (error !== undefined) failed ??= { row, error };
      });
      inFlight.add(publish);
      void publish.finally(() => inFlight.delete(publish));
    }
    await Promise.all(inFlight);
    return failed;
  }

  /**
   * Publishes `row` once `previous` (the publish under way of its task's earlier event, if any)
   * succeeded, adding it to `unmarked`; answers whether it is on the stream. `gaveUp` hears of a
   * failed publish (with its error) or of one not tried because the earlier event failed. A publish
   * after a commit that waited for its task's earlier event goes out as soon as that one is
   * acknowledged, not in the next turn: it waited a round trip already, and the turn would have it
   * wait for other tasks' acknowledgements too. Being in no turn, the next turn does not wait for it.
   */
  private publishAfter(
    context: JetStreamContext | (() => Promise<JetStreamContext>),
    row: OutboxRow,
    previous: Promise<boolean> | undefined,
    gaveUp: (error?: unknown) => void,
  ): Promise<boolean> {
    const publish = (async (): Promise<boolean> => {
      if (previous && !(await previous)) {
        gaveUp();
        return false;
      }
      let inTurn = false;
      try {
        const js = (typeof context !== 'function' ? context : previous ? await this.jetStreamContext() : await context()).js;
        inTurn = typeof context === 'function' && !previous;
        if (inTurn) this.turnUnacknowledged += 1;
        await publishWithMsgId(
          js,
          prefixedSubject(this.options.subjectPrefix, row.subject),
          row.payload,
          row.id,
          this.options.publishTimeoutMs,
          row.trace_parent,
          { ...relayEventCloudEventHeaders(row.subject, row.payload, this.options.publicUrl), [TASK_EVENT_POSITION_HEADER]: row.position },
        );
        this.unmarked.add(row.id);
        this.abandoned.delete(row.id);
        if (this.unmarked.size >= this.options.batchSize) void this.markPublished();
        else this.scheduleMarks();
        return true;
      } catch (error) {
        gaveUp(error);
        return false;
      } finally {
        if (inTurn && --this.turnUnacknowledged === 0) this.turnAcknowledged?.();
      }
    })();
    this.publishing.set(row.id, publish);
    this.taskTails.set(row.task_id, publish);
    void publish.finally(() => {
      this.publishing.delete(row.id);
      if (this.taskTails.get(row.task_id) === publish) this.taskTails.delete(row.task_id);
    });
    return publish;
  }

  /** Writes the published marks now (also done a moment after each publish, and at shutdown). */
  async markPublished(): Promise<void> {
    if (this.markTimer) clearTimeout(this.markTimer);
    this.markTimer = null;
    while (this.marking) await this.marking;
    if (this.unmarked.size === 0) return;
    const ids = [...this.unmarked];
    this.marking = this.dataSource
      .query(`UPDATE ${OUTBOX_TABLE} SET published_at = now(), attempts = attempts + 1, last_error = NULL WHERE id = ANY($1::uuid[])`, [ids])
      .then(() => ids.forEach((id) => this.unmarked.delete(id)))
      .catch((error: unknown) => {
        this.logger.warn({ err: error, events: ids.length }, 'could not mark published outbox events; trying again shortly');
        this.scheduleMarks();
      })
      .finally(() => (this.marking = null));
    await this.marking;
  }

  private scheduleMarks(): void {
    if (this.markTimer || this.stopping) return;
    this.markTimer = setTimeout(() => {
      this.markTimer = null;
      void this.markPublished();
    }, this.options.markDelayMs);
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      if (!(await this.lead())) {
        await this.sleep(STANDBY_RETRY_MS);
        continue;
      }
      let published: number;
      try {
        published = await this.relayOnce();
        if (this.backoffMs > 0) this.logger.log('outbox relay recovered');
        this.backoffMs = 0;
      } catch (error) {
        this.backoffMs = Math.min(this.options.maxBackoffMs, this.backoffMs > 0 ? this.backoffMs * 2 : this.options.minBackoffMs);
        this.logger.warn({ err: error, retry_in_ms: this.backoffMs }, 'outbox relay round failed');
        await this.sleep(this.backoffMs * (0.8 + Math.random() * 0.4));
        continue;
      }
      if (published >= this.options.batchSize) continue;
      await this.sleep(this.options.pollIntervalMs, true);
    }
  }

  /** Waits `ms`, or until the relay stops (or, `wakeable`, a publish after a commit failed). */
  private sleep(ms: number, wakeable = false): Promise<void> {
    return this.stopping ? Promise.resolve() : this.delay.wait(ms, wakeable);
  }

  /** The JetStream connection with the event stream checked, opened once however many publishes ask for it at once. */
  private jetStreamContext(): Promise<JetStreamContext> {
    if (this.closed) return Promise.reject(new Error('the outbox relay has stopped'));
    this.opening ??= this.ensureJetStream().finally(() => (this.opening = null));
    return this.opening;
  }

  protected async ensureJetStream(): Promise<JetStreamContext> {
    if (!this.jetStream || this.jetStream.connection.isClosed()) {
      this.jetStream = await openJetStream({
        url: this.options.natsUrl,
        name: 'agentrelay-tasks-outbox',
        inboxPrefix: natsInboxPrefix('tasks', this.options.subjectPrefix),
      });
      this.streamReady = false;
    }
    if (!this.streamReady) {
      await ensureEventStream(this.jetStream.jsm, this.options.subjectPrefix);
      this.streamReady = true;
    }
    return this.jetStream;
  }

  /** Takes the relay's lock if no other replica of this relay holds it; false while another one does. */
  private async lead(): Promise<boolean> {
    const lockSession = this.lockSession;
    if (!lockSession) return false;
    if (this.leading) return true;
    if (Date.now() < this.nextLeadershipTry) return false;
    this.nextLeadershipTry = Date.now() + STANDBY_RETRY_MS;
    try {
      const { rows } = await lockSession.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(hashtext($1)) AS "locked"`, [
        `agentrelay.outbox:${this.options.subjectPrefix}`,
      ]);
      this.leading = lockSession === this.lockSession && rows[0]?.locked === true;
      if (this.leading) this.logger.log('this replica relays the outbox');
    } catch (error) {
      this.logger.warn({ err: error }, 'could not take the outbox relay lock');
    }
    return this.leading;
  }

  /** Opens the session the relay's lock is held on: the lock goes with it when this replica's connection closes. */
  private async openLockSession(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.databaseUrl, application_name: 'agentrelay-tasks-outbox' });
    client.on('error', (error) => {
      this.logger.warn({ err: error }, 'outbox relay lock session lost; relaying stops until it is back');
      if (this.lockSession === client) {
        this.lockSession = null;
        this.leading = false;
      }
      void client.end().catch(() => undefined);
      this.reconnectSoon();
    });
    try {
      await client.connect();
      if (this.stopping) {
        await client.end();
        return;
      }
      this.lockSession = client;
    } catch (error) {
      this.logger.warn({ err: error }, 'could not open the outbox relay lock session; trying again shortly');
      await client.end().catch(() => undefined);
      this.reconnectSoon();
    }
  }

  private reconnectSoon(): void {
    if (this.stopping || this.reconnect) return;
    this.reconnect = setTimeout(() => {
      this.reconnect = null;
      if (!this.stopping && !this.lockSession) void this.openLockSession();
    }, 1000);
  }
}
