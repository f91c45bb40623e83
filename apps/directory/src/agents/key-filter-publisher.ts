import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { DataSource } from 'typeorm';
import { keyFilterDigest, natsInboxPrefix, openJetStream, openKeyFilterBucket } from '@app/messaging';
import { DirectoryConfig } from '../directory.config';
import { pgPoolOf } from '@app/database';

const STORE_TIMEOUT_MS = 2000;
/** How often the bucket is checked (and, after a failed write or a lost bucket, reconciled). */
const SWEEP_INTERVAL_MS = 30_000;
/** Keys read from the database, and written to the bucket at once, per reconcile step. */
const RECONCILE_PAGE = 500;

/**
 * Keeps the key filter bucket (see `openKeyFilterBucket`) listing a digest of every live API key
 * (unrevoked, of an enabled agent), so that edges tell a key that could be valid from a guess
 * without asking. A key is put before its issue is answered and deleted once its revocation is
 * committed; on start, and after any write that failed or a bucket that went missing, the bucket
 * is reconciled with the database in pages (missing digests put, stale ones deleted). Writes are
 * best effort: a failure never fails an issue or a revocation, it only schedules a reconcile.
 */
@Injectable()
export class KeyFilterPublisher implements OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown {
  private readonly logger = new Logger(KeyFilterPublisher.name);
  private connection?: NatsConnection;
  private bucket?: Promise<KV>;
  private needsReconcile = true;
  private sweeping?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private stopping = false;

  constructor(
    @Inject(DirectoryConfig) private readonly config: DirectoryConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.connection = (
      await openJetStream({
        url: this.config.natsServers,
        name: 'agentrelay-directory-key-filter',
        inboxPrefix: natsInboxPrefix('directory', this.config.NATS_SUBJECT_PREFIX),
      })
    ).connection;
    await this.open();
    this.timer = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.timer.unref();
    // In the background: a big table never holds the start.
    void this.sweep();
  }

  /** Stops the sweep; a reconcile under way ends after its current page. */
  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.onModuleDestroy();
    const connection = this.connection;
    this.connection = undefined;
    if (connection && !connection.isClosed()) await connection.drain();
  }

  /** Lists a newly issued key (by its stored hash). */
  async add(keyHash: string): Promise<void> {
    try {
      const bucket = await this.open();
      await bucket.put(keyFilterDigest(keyHash), '', { timeout: STORE_TIMEOUT_MS });
    } catch (error) {
      this.failed(error, 'a new key is not in the key filter yet; reconciling on the next sweep');
    }
  }

  /** Unlists revoked keys (by their stored hashes). */
  async remove(keyHashes: string[]): Promise<void> {
    if (keyHashes.length === 0) return;
    try {
      const bucket = await this.open();
      await Promise.all(keyHashes.map((keyHash) => bucket.delete(keyFilterDigest(keyHash))));
    } catch (error) {
      this.failed(error, 'a revoked key is still in the key filter; reconciling on the next sweep');
    }
  }

  /** One sweep at a time: reconciles when a write failed or the bucket is new or gone, else checks it is there. */
  sweep(): Promise<void> {
    this.sweeping ??= (async () => {
      try {
        let bucket = await this.open();
        if (!this.needsReconcile) {
          try {
            await bucket.status();
            return;
          } catch {
            // Gone (a NATS server that lost its store, say): created again and filled now.
            this.bucket = undefined;
            bucket = await this.open();
          }
        }
        this.needsReconcile = false;
        await this.reconcile(bucket);
      } catch (error) {
        this.failed(error, 'key filter not reconciled; retrying on the next sweep');
      } finally {
        this.sweeping = undefined;
      }
    })();
    return this.sweeping;
  }

  /**
   * Makes the bucket list exactly the live keys. The bucket's keys are read before the database, so
   * a key issued meanwhile (put after its commit) is either read from the database or not among the
   * keys this pass may delete.
   */
  private async reconcile(bucket: KV): Promise<void> {
    const listed = new Set<string>();
    for await (const digest of await bucket.keys()) listed.add(digest);
    const pool = pgPoolOf(this.dataSource);
    let added = 0;
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const { rows } = await pool.query<{ id: string; key_hash: string }>(
        `SELECT k."id", k."key_hash" FROM "directory"."api_keys" k JOIN "directory"."agents" a ON a."id" = k."agent_id"
         WHERE k."revoked_at" IS NULL AND a."disabled_at" IS NULL AND k."id" > $1 ORDER BY k."id" LIMIT $2`,
        [after, RECONCILE_PAGE],
      );
      const missing = rows.map((row) => keyFilterDigest(row.key_hash)).filter((digest) => !listed.delete(digest));
      await Promise.all(missing.map((digest) => bucket.put(digest, '', { timeout: STORE_TIMEOUT_MS })));
      added += missing.length;
      if (rows.length < RECONCILE_PAGE) break;
      if (this.stopping) {
        this.needsReconcile = true;
        return;
      }
      after = rows[rows.length - 1].id;
    }
    const stale = [...listed];
    for (let start = 0; start < stale.length; start += RECONCILE_PAGE) {
      await Promise.all(stale.slice(start, start + RECONCILE_PAGE).map((digest) => bucket.delete(digest)));
    }
    if (added > 0 || stale.length > 0) this.logger.log({ added, removed: stale.length }, 'key filter reconciled with the database');
  }

  private open(): Promise<KV> {
    const connection = this.connection;
    if (!connection) return Promise.reject(new Error('the key filter has no NATS connection yet'));
    this.bucket ??= openKeyFilterBucket(connection, this.config.NATS_SUBJECT_PREFIX, {
      create: true,
      timeoutMs: STORE_TIMEOUT_MS,
      replicas: this.config.RELAY_JETSTREAM_REPLICAS,
      maxBytes: this.config.RELAY_STATE_STREAM_MAX_BYTES,
    }).catch((error: unknown) => {
      this.bucket = undefined;
      throw error;
    });
    return this.bucket;
  }

  private failed(error: unknown, message: string): void {
    this.needsReconcile = true;
    // A bucket deleted under us is created again (empty) by the next open, then filled by the reconcile.
    this.bucket = undefined;
    this.logger.warn({ err: error }, message);
  }
}
