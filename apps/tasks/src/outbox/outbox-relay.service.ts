import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { prefixedSubject, TASK_EVENT_POSITION_HEADER } from '@app/contracts';
import { ensureEventStream, openJetStream, publishWithMsgId, WakeableDelay, type JetStreamContext } from '@app/messaging';
import { OUTBOX_NOTIFY_CHANNEL, OUTBOX_RELAY_OPTIONS, OUTBOX_TABLE, type OutboxRelayOptions } from './outbox.constants';

interface UnpublishedRow {
  id: string;
  position: string;
  subject: string;
  payload: unknown;
  trace_parent: string | null;
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
SELECT id, position::text AS position, subject, payload, trace_parent FROM ${OUTBOX_TABLE}
WHERE published_at IS NULL AND NOT (id = ANY($2::uuid[]))
ORDER BY outbox_events.position
LIMIT $1`;

@Injectable()
export class OutboxRelayService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(OutboxRelayService.name);
  private jetStream: JetStreamContext | null = null;
  private streamReady = false;
  private listener: pg.Client | null = null;
  /** Whether this replica holds the relay's lock (on the LISTEN connection) and so publishes. */
  private leading = false;
  private nextLeadershipTry = 0;
  private relisten: NodeJS.Timeout | null = null;
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
    void this.listen();
    this.loop = this.run();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    this.delay.interrupt();
    await this.loop;
    this.loop = null;
    await this.markPublished().catch(() => undefined);
    if (this.relisten) clearTimeout(this.relisten);
    const listener = this.listener;
    this.listener = null;
    this.leading = false;
    await listener?.end().catch(() => undefined);
    const jetStream = this.jetStream;
    this.jetStream = null;
    if (jetStream && !jetStream.connection.isClosed()) await jetStream.connection.drain().catch(() => undefined);
  }

  /** Asks the relay to look at the outbox now (also triggered by a NOTIFY on the channel). */
  wake(): void {
    this.delay.wake();
  }

  /** Relays one batch; returns how many rows it published. Exposed for tests and tooling. */
  async relayOnce(): Promise<number> {
    const context = await this.ensureJetStream();
    const rows = (await this.dataSource.query(UNPUBLISHED_SQL, [this.options.batchSize, [...this.unmarked]])) as UnpublishedRow[];
    let published = 0;
    try {
      for (const row of rows) {
        await publishWithMsgId(
          context.js,
          prefixedSubject(this.options.subjectPrefix, row.subject),
          row.payload,
          row.id,
          this.options.publishTimeoutMs,
          row.trace_parent,
          { [TASK_EVENT_POSITION_HEADER]: row.position },
        ).catch(async (error: unknown) => {
          const message = error instanceof Error ? error.message : String(error);
          await this.dataSource
            .query(`UPDATE ${OUTBOX_TABLE} SET attempts = attempts + 1, last_error = $2 WHERE id = $1`, [row.id, message.slice(0, 1000)])
            .catch(() => undefined);
          // The stream may have been removed or the connection replaced: check it again next round.
          this.streamReady = false;
          throw error;
        });
        this.unmarked.add(row.id);
        published += 1;
      }
    } finally {
      if (this.unmarked.size > 0) this.scheduleMarks();
    }
    if (this.unmarked.size >= this.options.batchSize) await this.markPublished();
    return published;
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
        await this.sleep(STANDBY_RETRY_MS, false);
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
        await this.sleep(this.backoffMs * (0.8 + Math.random() * 0.4), false);
        continue;
      }
      if (published >= this.options.batchSize) continue;
      // A commit wakes the relay through LISTEN; the poll only catches a lost notification.
      await this.sleep(this.options.idlePollIntervalMs, true);
    }
  }

  /** Waits `ms`; a wake-up cuts it short unless the relay is backing off after a failure. */
  private sleep(ms: number, wakeable: boolean): Promise<void> {
    return this.stopping ? Promise.resolve() : this.delay.wait(ms, wakeable);
  }

  private async ensureJetStream(): Promise<JetStreamContext> {
    if (!this.jetStream || this.jetStream.connection.isClosed()) {
      this.jetStream = await openJetStream({ url: this.options.natsUrl, name: 'agentrelay-tasks-outbox' });
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
    const listener = this.listener;
    if (!listener) return false;
    if (this.leading) return true;
    if (Date.now() < this.nextLeadershipTry) return false;
    this.nextLeadershipTry = Date.now() + STANDBY_RETRY_MS;
    try {
      const { rows } = await listener.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(hashtext($1)) AS "locked"`, [
        `agentrelay.outbox:${this.options.subjectPrefix}`,
      ]);
      this.leading = listener === this.listener && rows[0]?.locked === true;
      if (this.leading) this.logger.log('this replica relays the outbox');
    } catch (error) {
      this.logger.warn({ err: error }, 'could not take the outbox relay lock');
    }
    return this.leading;
  }

  /** LISTENs for commits that wrote outbox rows, and holds the relay's lock on the same connection. */
  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.databaseUrl, application_name: 'agentrelay-tasks-outbox' });
    client.on('notification', () => this.wake());
    client.on('error', (error) => {
      this.logger.warn({ err: error }, 'outbox LISTEN connection lost; polling until it is back');
      if (this.listener === client) {
        this.listener = null;
        this.leading = false;
      }
      void client.end().catch(() => undefined);
      this.listenAgainSoon();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${OUTBOX_NOTIFY_CHANNEL}`);
      if (this.stopping) {
        await client.end();
        return;
      }
      this.listener = client;
    } catch (error) {
      this.logger.warn({ err: error }, 'could not LISTEN for outbox commits; polling until it can');
      await client.end().catch(() => undefined);
      this.listenAgainSoon();
    }
  }

  private listenAgainSoon(): void {
    if (this.stopping || this.relisten) return;
    this.relisten = setTimeout(() => {
      this.relisten = null;
      if (!this.stopping && !this.listener) void this.listen();
    }, 1000);
  }
}
