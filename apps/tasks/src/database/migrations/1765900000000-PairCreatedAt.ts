import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The index a create's pair rate counts on (docs/chains.md): a pair's handoffs by creation time,
 * so the count of the last minute reads the pair's own entries, from the index alone where the
 * table's pages are all visible, not every handoff of the sender in that minute. Built
 * CONCURRENTLY (a big table takes writes meanwhile), so not in a transaction.
 */
export class PairCreatedAt1765900000000 implements MigrationInterface {
  name = 'PairCreatedAt1765900000000';
  transaction = false;

  async up(runner: QueryRunner): Promise<void> {
    // An index left invalid by a failed CONCURRENTLY build would be kept by IF NOT EXISTS: drop it first.
    await runner.query(
      `DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'tasks' AND c.relname = 'tasks_pair_created_at_idx' AND NOT i.indisvalid) THEN EXECUTE 'DROP INDEX "tasks"."tasks_pair_created_at_idx"'; END IF; END $$`,
    );
    await runner.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS "tasks_pair_created_at_idx" ON "tasks"."tasks" ("sender_id", "recipient_id", "created_at")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX CONCURRENTLY IF EXISTS "tasks"."tasks_pair_created_at_idx"`);
  }
}
