import type { LoggerService, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type pg from 'pg';

const MAX_BIGINT = '9223372036854775807';

/**
 * One batch of rows of `table` written before `$1`, at most `$2`, oldest first, that also meet
 * `condition`: `key` is a column that follows writing order (a bigserial), `time` the row's time.
 * The scan stops at the first row inside the window, so a batch never reads the rows it keeps; rows
 * another transaction holds are skipped, not waited for. One statement, so one short transaction.
 */
export function deleteOldestBatchSql(table: string, key: string, time: string, condition = 'true'): string {
  return `
WITH "bound" AS (
  SELECT COALESCE((SELECT "${key}" FROM ${table} WHERE "${time}" >= $1 ORDER BY "${key}" LIMIT 1), ${MAX_BIGINT}) AS "key"
), "doomed" AS (
  SELECT "${key}" FROM ${table} WHERE "${key}" < (SELECT "key" FROM "bound") AND "${time}" < $1 AND ${condition}
  ORDER BY "${key}" LIMIT $2 FOR UPDATE SKIP LOCKED
)
DELETE FROM ${table} WHERE "${key}" IN (SELECT "${key}" FROM "doomed")`;
}

/** One table's rows past their window. */
export interface RetentionSweep {
  /** The table, as named on the metric and in the log line. */
  table: string;
  /** Deletes at most `limit` rows past the window in one short transaction of its own; answers how many it deleted. */
  deleteBatch(limit: number): Promise<number>;
}

export interface RetentionBatching {
  batchSize: number;
  pauseMs: number;
}

export interface RetentionHooks {
  /** Called after every batch that deleted rows. */
  deleted(table: string, rows: number): void;
  /** Whether to stop after the current batch (the process is shutting down). */
  stopping(): boolean;
  /** Waits between two batches. */
  pause(ms: number): Promise<void>;
}

/**
 * Runs each sweep's batches, one table after the other, until a batch deletes fewer rows than a
 * batch holds (the table is caught up), pausing between batches so that the deletes never hold the
 * database for long. Answers the rows deleted per table.
 */
export async function runSweeps(sweeps: readonly RetentionSweep[], batching: RetentionBatching, hooks: RetentionHooks): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const sweep of sweeps) {
    counts[sweep.table] = 0;
    while (!hooks.stopping()) {
      const rows = await sweep.deleteBatch(batching.batchSize);
      if (rows > 0) {
        counts[sweep.table] += rows;
        hooks.deleted(sweep.table, rows);
      }
      if (rows < batching.batchSize) break;
      await hooks.pause(batching.pauseMs);
    }
  }
  return counts;
}

/**
 * Runs `work` only while this session holds the advisory lock named `name`, taken with a try-lock that
 * never waits: answers undefined at once when another replica holds it. The lock is held on one
 * connection of the pool for the run and given back after it.
 */
export async function withTryAdvisoryLock<T>(pool: pg.Pool, name: string, work: () => Promise<T>): Promise<T | undefined> {
  const client = await pool.connect();
  // A connection that failed a lock query may still hold the lock: it is closed rather than pooled.
  let broken: Error | undefined;
  try {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS "locked"', [name]).catch((error: Error) => {
      broken = error;
      throw error;
    });
    if (rows[0]?.locked !== true) return undefined;
    try {
      return await work();
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [name]).catch((error: Error) => (broken = error));
    }
  } finally {
    client.release(broken);
  }
}

export interface RetentionScheduleOptions extends RetentionBatching {
  /** The advisory lock only one replica at a time holds while it deletes. */
  lockName: string;
  intervalMs: number;
}

export interface RetentionLog {
  log(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

/**
 * A service's retention on a schedule: every `intervalMs` the replica that gets the advisory lock runs
 * the sweeps (the others skip the round), counts the deleted rows and logs one line per run.
 */
export class RetentionSchedule {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = false;
  private wakePause: (() => void) | null = null;

  constructor(
    private readonly pool: () => pg.Pool,
    private readonly sweeps: () => RetentionSweep[],
    private readonly options: RetentionScheduleOptions,
    private readonly deleted: (table: string, rows: number) => void,
    private readonly log: RetentionLog,
  ) {}

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => void this.runOnce(), this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.wakePause?.();
    await this.running?.catch(() => undefined);
  }

  /**
   * One run now (a run already going on is waited for instead): the rows deleted per table, or
   * undefined when another replica holds the lock.
   */
  async runOnce(): Promise<Record<string, number> | undefined> {
    if (this.running) {
      await this.running.catch(() => undefined);
      return undefined;
    }
    const run = this.run();
    this.running = run;
    try {
      return await run;
    } catch (error) {
      this.log.warn({ err: error }, 'retention run failed; the next run goes on from there');
      return undefined;
    } finally {
      this.running = null;
    }
  }

  private async run(): Promise<Record<string, number> | undefined> {
    const started = Date.now();
    const counts = await withTryAdvisoryLock(this.pool(), this.options.lockName, () =>
      runSweeps(this.sweeps(), this.options, { deleted: this.deleted, stopping: () => this.stopped, pause: (ms) => this.pause(ms) }),
    );
    if (counts) this.log.log({ deleted: counts, duration_ms: Date.now() - started }, 'retention run');
    return counts;
  }

  private pause(ms: number): Promise<void> {
    if (this.stopped || ms === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wakePause = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakePause = done;
    });
  }
}

/** What a service's retention is told by its config (RetentionServiceConfig in libs/config). */
export interface RetentionSettings {
  NATS_SUBJECT_PREFIX: string;
  RELAY_RETENTION_INTERVAL_MS: number;
  RELAY_RETENTION_BATCH_SIZE: number;
  RELAY_RETENTION_PAUSE_MS: number;
}

/**
 * One service's retention: its sweeps on a RetentionSchedule that starts with the service, stops
 * before it, and runs under a lock named for the service and the deployment's subject prefix.
 */
export abstract class ServiceRetention implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly schedule: RetentionSchedule;

  protected constructor(
    service: string,
    pool: () => pg.Pool,
    settings: RetentionSettings,
    deleted: (table: string, rows: number) => void,
    logger: Pick<LoggerService, 'log' | 'warn'>,
  ) {
    this.schedule = new RetentionSchedule(
      pool,
      () => this.sweeps(),
      {
        lockName: `agentrelay.retention.${service}:${settings.NATS_SUBJECT_PREFIX}`,
        intervalMs: settings.RELAY_RETENTION_INTERVAL_MS,
        batchSize: settings.RELAY_RETENTION_BATCH_SIZE,
        pauseMs: settings.RELAY_RETENTION_PAUSE_MS,
      },
      deleted,
      { log: (fields, message) => logger.log(fields, message), warn: (fields, message) => logger.warn(fields, message) },
    );
  }

  /** The tables to sweep in this run, with their cutoffs as of now. */
  protected abstract sweeps(): RetentionSweep[];

  onApplicationBootstrap(): void {
    this.schedule.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.schedule.stop();
  }

  /** One run now: the rows deleted per table, or undefined when another replica is running one. */
  runOnce(): Promise<Record<string, number> | undefined> {
    return this.schedule.runOnce();
  }
}
