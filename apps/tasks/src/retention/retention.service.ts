import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { deleteOldestBatchSql, pgPoolOf, type RetentionSweep, ServiceRetention } from '@app/database';
import { RetentionMetrics } from '@app/metrics';
import { TasksConfig } from '../tasks.config';
import { DELETE_IDEMPOTENCY_BATCH_SQL, DELETE_OUTBOX_BATCH_SQL, DELETE_TERMINAL_TASKS_BATCH_SQL } from './retention-sql';

const DAY_MS = 86_400_000;

/**
 * The tasks service's retention (docs/architecture.md#retention): published outbox events, idempotency
 * keys and audit rows past their windows, and, when RELAY_TERMINAL_TASK_RETENTION_DAYS is set, tasks
 * terminal for longer, deleted in small batches on a schedule by one replica at a time.
 */
@Injectable()
export class TasksRetentionService extends ServiceRetention {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(TasksConfig) private readonly config: TasksConfig,
    @Inject(RetentionMetrics) private readonly metrics: RetentionMetrics,
  ) {
    super(
      'tasks',
      () => pgPoolOf(dataSource),
      config,
      (table, rows) => metrics.deleted(table, rows),
      new Logger(TasksRetentionService.name),
    );
    metrics.tables([
      'tasks.outbox_events',
      'tasks.idempotency_keys',
      'tasks.audit_log',
      ...(config.RELAY_TERMINAL_TASK_RETENTION_DAYS > 0 ? ['tasks.tasks'] : []),
    ]);
  }

  protected sweeps(): RetentionSweep[] {
    const now = Date.now();
    const before = (days: number): Date => new Date(now - days * DAY_MS);
    const sweeps: RetentionSweep[] = [];
    if (this.config.RELAY_TERMINAL_TASK_RETENTION_DAYS > 0) {
      const cutoff = before(this.config.RELAY_TERMINAL_TASK_RETENTION_DAYS);
      sweeps.push({
        table: 'tasks.tasks',
        deleteBatch: async (limit) => {
          const [row] = (await this.dataSource.query(DELETE_TERMINAL_TASKS_BATCH_SQL, [cutoff, limit])) as Array<{ tasks: number; events: number }>;
          if (row.events > 0) this.metrics.deleted('tasks.outbox_events', row.events);
          return row.tasks;
        },
      });
    }
    const outboxCutoff = before(this.config.RELAY_OUTBOX_RETENTION_DAYS);
    sweeps.push({
      table: 'tasks.outbox_events',
      deleteBatch: async (limit) => {
        const [row] = (await this.dataSource.query(DELETE_OUTBOX_BATCH_SQL, [outboxCutoff, limit])) as Array<{ deleted: number }>;
        return row.deleted;
      },
    });
    sweeps.push(this.deleteSweep('tasks.idempotency_keys', DELETE_IDEMPOTENCY_BATCH_SQL, before(this.config.RELAY_IDEMPOTENCY_RETENTION_DAYS)));
    sweeps.push(this.deleteSweep('tasks.audit_log', deleteOldestBatchSql('"tasks"."audit_log"', 'id', 'at'), before(this.config.RELAY_AUDIT_RETENTION_DAYS)));
    return sweeps;
  }

  /** A sweep whose batch is one DELETE of (cutoff, limit). */
  private deleteSweep(table: string, sql: string, cutoff: Date): RetentionSweep {
    return {
      table,
      deleteBatch: async (limit) => {
        const result = (await this.dataSource.query(sql, [cutoff, limit])) as [unknown[], number];
        return result[1];
      },
    };
  }
}
