import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from '@app/database';

/** The terminal states, whose tasks may be deleted after RELAY_TERMINAL_TASK_RETENTION_DAYS. */
export const TERMINAL_STATES_SQL = `'completed', 'cancelled', 'failed', 'rejected'`;

/**
 * Retention (docs/architecture.md#retention): where the outbox has been deleted through, which bounds
 * how far back a stream resumes, and the indexes that find idempotency keys and terminal tasks past
 * their window without a scan. The indexes are built CONCURRENTLY, so a big table takes writes while
 * they are built; that cannot run in a transaction, so every statement here stands alone and can
 * run again after a failure.
 */
export class Retention1764580000000 implements MigrationInterface {
  name = 'Retention1764580000000';
  transaction = false;

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `CREATE TABLE IF NOT EXISTS "tasks"."outbox_horizon" ("id" smallint NOT NULL, "deleted_through" bigint NOT NULL DEFAULT 0, CONSTRAINT "outbox_horizon_pkey" PRIMARY KEY ("id"))`,
    );
    await runner.query(`INSERT INTO "tasks"."outbox_horizon" ("id", "deleted_through") VALUES (1, 0) ON CONFLICT DO NOTHING`);
    for (const [index, definition] of [
      ['idempotency_keys_created_at_idx', `"tasks"."idempotency_keys" ("created_at")`],
      ['tasks_terminal_status_idx', `"tasks"."tasks" ("status_timestamp") WHERE "state" IN (${TERMINAL_STATES_SQL})`],
    ]) {
      await createIndexConcurrently(runner, 'tasks', index, definition);
    }
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX CONCURRENTLY IF EXISTS "tasks"."tasks_terminal_status_idx"`);
    await runner.query(`DROP INDEX CONCURRENTLY IF EXISTS "tasks"."idempotency_keys_created_at_idx"`);
    await runner.query(`DROP TABLE IF EXISTS "tasks"."outbox_horizon"`);
  }
}
