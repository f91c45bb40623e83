import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { deleteOldestBatchSql, pgPoolOf, type RetentionSweep, ServiceRetention } from '@app/database';
import { RetentionMetrics } from '@app/metrics';
import { DirectoryConfig } from '../directory.config';

const DAY_MS = 86_400_000;
export const PUBLISHED_AGENT_EVENT = `"published_at" IS NOT NULL`;

const DELETE_AUDIT_BATCH_SQL = deleteOldestBatchSql('"directory"."admin_audit"', 'id', 'at');
const DELETE_OUTBOX_BATCH_SQL = deleteOldestBatchSql('"directory"."outbox_events"', 'position', 'created_at', PUBLISHED_AGENT_EVENT);

/**
 * The directory's retention (docs/architecture.md#retention): the admin audit and the published agent
 * events past their windows, deleted in small batches on a schedule by one replica at a time.
 */
@Injectable()
export class DirectoryRetentionService extends ServiceRetention {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(DirectoryConfig) private readonly config: DirectoryConfig,
    @Inject(RetentionMetrics) metrics: RetentionMetrics,
  ) {
    super(
      'directory',
      () => pgPoolOf(dataSource),
      config,
      (table, rows) => metrics.deleted(table, rows),
      new Logger(DirectoryRetentionService.name),
    );
    metrics.tables(['directory.admin_audit', 'directory.outbox_events']);
  }

  protected sweeps(): RetentionSweep[] {
    const now = Date.now();
    return [
      this.sweep('directory.admin_audit', DELETE_AUDIT_BATCH_SQL, new Date(now - this.config.RELAY_AUDIT_RETENTION_DAYS * DAY_MS)),
      this.sweep('directory.outbox_events', DELETE_OUTBOX_BATCH_SQL, new Date(now - this.config.RELAY_OUTBOX_RETENTION_DAYS * DAY_MS)),
    ];
  }

  private sweep(table: string, sql: string, cutoff: Date): RetentionSweep {
    return {
      table,
      deleteBatch: async (limit) => {
        const result = (await this.dataSource.query(sql, [cutoff, limit])) as [unknown[], number];
        return result[1];
      },
    };
  }
}
