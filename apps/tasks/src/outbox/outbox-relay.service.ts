import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { prefixedSubject } from '@app/contracts';
import { ensureEventStream, openJetStream, publishWithMsgId, WakeableDelay, type JetStreamContext } from '@app/messaging';
import { OUTBOX_NOTIFY_CHANNEL, OUTBOX_RELAY_OPTIONS, OUTBOX_TABLE, type OutboxRelayOptions } from './outbox.constants';

interface ClaimedRow {
  id: string;
  position: string;
  subject: string;
  payload: unknown;
}

/**
 * Claims unsent outbox rows in position order, oldest first, skipping rows another replica holds
 * (`FOR UPDATE SKIP LOCKED`) and any row whose task still has an earlier unsent event outside this
 * claim, so events of one task reach the stream in their order even with several replicas.
 */
const CLAIM_SQL = `
WITH claimed AS MATERIALIZED (
  SELECT id, position, task_id, subject, payload
  FROM ${OUTBOX_TABLE}
  WHERE published_at IS NULL
  ORDER BY position
  LIMIT $1
  FOR UPDATE SKIP LOCKED
)
SELECT c.id, c.position, c.subject, c.payload
FROM claimed c
WHERE NOT EXISTS (
  SELECT 1 FROM ${OUTBOX_TABLE} earlier
  WHERE earlier.task_id = c.task_id
    AND earlier.published_at IS NULL
    AND earlier.position < c.position
    AND earlier.id NOT IN (SELECT id FROM claimed)
)
ORDER BY c.position`;

/**
 * The transactional outbox relay: publishes the task events the tasks service wrote to its outbox
 * to JetStream (`Nats-Msg-Id` = event id), then marks them published. A failed publish keeps the
 * row (and every later one) for the next round, after a backoff. A crash between publish and mark
 * re-publishes the row, which JetStream's duplicate window drops.
 */
@Injectable()
export class OutboxRelayService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(OutboxRelayService.name);
  private jetStream: JetStreamContext | null = null;
  private streamReady = false;
  private listener: pg.Client | null = null;
  private relisten: NodeJS.Timeout | null = null;
  private loop: Promise<void> | null = null;
  private stopping = false;
  private readonly delay = new WakeableDelay();
  private backoffMs = 0;

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
    if (this.relisten) clearTimeout(this.relisten);
    const listener = this.listener;
    this.listener = null;
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
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    let failure: unknown;
    const published: string[] = [];
    try {
      await runner.startTransaction();
      const rows = (await runner.query(CLAIM_SQL, [this.options.batchSize])) as ClaimedRow[];
      let failedRow: ClaimedRow | undefined;
      for (const row of rows) {
        try {
          await publishWithMsgId(context.js, prefixedSubject(this.options.subjectPrefix, row.subject), row.payload, row.id, this.options.publishTimeoutMs);
          published.push(row.id);
        } catch (error) {
          failure = error;
          failedRow = row;
          break;
        }
      }
      if (published.length > 0) {
        await runner.query(`UPDATE ${OUTBOX_TABLE} SET published_at = now(), attempts = attempts + 1, last_error = NULL WHERE id = ANY($1::uuid[])`, [published]);
      }
      if (failedRow) {
        const message = failure instanceof Error ? failure.message : String(failure);
        await runner.query(`UPDATE ${OUTBOX_TABLE} SET attempts = attempts + 1, last_error = $2 WHERE id = $1`, [failedRow.id, message.slice(0, 1000)]);
      }
      await runner.commitTransaction();
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      failure ??= error;
    } finally {
      await runner.release();
    }
    if (failure !== undefined) {
      // The stream may have been removed or the connection replaced: check it again next round.
      this.streamReady = false;
      throw failure;
    }
    return published.length;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
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
      await this.sleep(this.options.pollIntervalMs, true);
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

  /** LISTENs for commits that wrote outbox rows; without it the relay still polls. */
  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.databaseUrl, application_name: 'agentrelay-tasks-outbox' });
    client.on('notification', () => this.wake());
    client.on('error', (error) => {
      this.logger.warn({ err: error }, 'outbox LISTEN connection lost; polling until it is back');
      if (this.listener === client) this.listener = null;
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
