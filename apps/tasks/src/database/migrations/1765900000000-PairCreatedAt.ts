import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from '@app/database';

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
    await createIndexConcurrently(runner, 'tasks', 'tasks_pair_created_at_idx', `"tasks"."tasks" ("sender_id", "recipient_id", "created_at")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX CONCURRENTLY IF EXISTS "tasks"."tasks_pair_created_at_idx"`);
  }
}
