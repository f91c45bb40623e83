import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { prefixedSubject, relayEventCloudEventHeaders, TASK_EVENT_POSITION_HEADER } from '@app/contracts';
import { ensureEventStream, type JetStreamContext, natsInboxPrefix, openJetStream, publishWithMsgId, WakeableDelay } from '@app/messaging';
import { OUTBOX_PUBLISHED, OUTBOX_RELAY_OPTIONS, OUTBOX_TABLE, type OutboxRelayOptions } from './outbox.constants';

export interface UnpublishedRow {
  id: string;
  position: string;
  task_id: string;
  subject: string;
  payload: unknown;
  trace_parent: string | null;
}

/** The first publish of a round that failed; the round stopped there. */
interface FailedPublish {
  row: UnpublishedRow;
  error: unknown;
}

/** How often a replica that does not relay checks whether the relaying one is gone. */
const STANDBY_RETRY_MS = 1000;

/**
 * The outbox rows not published yet, oldest first, leaving out the ones this relay published and
 * has not marked yet. Events of one task are written by transactions that hold its row in turn, so
 * position order is their order. The ORDER BY names the table's column: the position selected as
 * text would sort 10 before 9.
 */
const UNPUBLISHED_SQL = `
SELECT id, position::text AS position, task_id, subject, payload, trace_parent FROM ${OUTBOX_TABLE}
WHERE NOT (${OUTBOX_PUBLISHED}) AND NOT (id = ANY($2::uuid[]))
ORDER BY outbox_events.position
LIMIT $1`;

@Injectable()
export class OutboxRelayService implements OnApplicationBootstrap, OnModuleDestroy {
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
  private markTimer: NodeJS.Timeout | null = null;
  private marking: Promise<void> | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(OUTBOX_RELAY_OPTIONS) private readonly options: OutboxRelayOptions,
  ) {}

  onApplicationBootstrap(): void {
    this.stopping = false;
    void this.openLockSession();
    this.loop = this.run();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    this.delay.interrupt();
    await this.loop;
    this.loop = null;
    await this.markPublished().catch(() => undefined);
    if (this.reconnect) clearTimeout(this.reconnect);
    const lockSession = this.lockSession;
    this.lockSession = null;
    this.leading = false;
    await lockSession?.end().catch(() => undefined);
    const jetStream = this.jetStream;
    this.jetStream = null;
    if (jetStream && !jetStream.connection.isClosed()) await jetStream.connection.drain().catch(() => undefined);
  }

  /** Relays one batch; returns how many rows it published. Exposed for tests and tooling. */
  async relayOnce(): Promise<number> {
    if (this.unmarked.size >= this.options.batchSize) {
      await this.markPublished();
      // Unmarked events are left out of every read: stop before their list grows past a batch.
      if (this.unmarked.size >= this.options.batchSize) throw new Error(`${this.unmarked.size} published outbox events could not be marked yet`);
    }
    const context = await this.ensureJetStream();
    const rows = await this.readUnpublished(this.options.batchSize, [...this.unmarked]);
    let failed: FailedPublish | null;
    try {
      failed = await this.publishAll(context, rows);
    } finally {
      if (this.unmarked.size > 0) this.scheduleMarks();
    }
    if (failed) {
      const message = failed.error instanceof Error ? failed.error.message : String(failed.error);
      await this.dataSource
        .query(`UPDATE ${OUTBOX_TABLE} SET attempts = attempts + 1, last_error = $2 WHERE id = $1`, [failed.row.id, message.slice(0, 1000)])
        .catch(() => undefined);
      // The stream may have been removed or the connection replaced: check it again next round.
      this.streamReady = false;
      throw failed.error;
    }
    if (this.unmarked.size >= this.options.batchSize) await this.markPublished();
    return rows.length;
  }

  /**
   * Reads on the lock's own session, as one prepared statement: the poll runs 1000 / pollIntervalMs
   * times a second, mostly finding nothing, and through the pool each read would cost several times
   * more in this process.
   */
  protected async readUnpublished(limit: number, unmarked: string[]): Promise<UnpublishedRow[]> {
    const lockSession = this.lockSession;
    if (!lockSession) throw new Error('the outbox relay lock session is not open');
    const { rows } = await lockSession.query<UnpublishedRow>({ name: 'outbox-unpublished', text: UNPUBLISHED_SQL, values: [limit, unmarked] });
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
    const lastOfTask = new Map<string, Promise<boolean>>();
    for (const row of rows) {
      while (inFlight.size >= this.options.publishConcurrency && !failed) await Promise.race(inFlight);
      if (failed) break;
      const previous = lastOfTask.get(row.task_id);
      const publish = (async (): Promise<boolean> => {
        if (previous && !(await previous)) return false;
        if (failed) return false;
        try {
          await publishWithMsgId(
            context.js,
            prefixedSubject(this.options.subjectPrefix, row.subject),
            row.payload,
            row.id,
            this.options.publishTimeoutMs,
            row.trace_parent,
            { ...relayEventCloudEventHeaders(row.subject, row.payload, this.options.publicUrl), [TASK_EVENT_POSITION_HEADER]: row.position },
          );
          this.unmarked.add(row.id);
          return true;
        } catch (error) {
          failed ??= { row, error };
          return false;
        }
      })();
      lastOfTask.set(row.task_id, publish);
      inFlight.add(publish);
      void publish.finally(() => inFlight.delete(publish));
    }
    await Promise.all(inFlight);
    return failed;
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
      await this.sleep(this.options.pollIntervalMs);
    }
  }

  /** Waits `ms`, or until the relay stops. */
  private sleep(ms: number): Promise<void> {
    return this.stopping ? Promise.resolve() : this.delay.wait(ms, false);
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
