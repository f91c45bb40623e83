import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The states counted against an org's open-handoffs quota (OPEN_HANDOFF_STATES). */
export const OPEN_STATES_SQL = `'pending', 'accepted', 'input_required', 'held'`;

/**
 * The index behind an org's open-handoffs quota (docs/orgs.md#quotas): the open handoffs by the
 * org of their sender's handle, so a create counts its org's open handoffs, up to the quota,
 * without a scan. Built CONCURRENTLY (a big table takes writes meanwhile), so not in a transaction.
 */
export class OpenHandoffsBySenderOrg1765845300000 implements MigrationInterface {
  name = 'OpenHandoffsBySenderOrg1765845300000';
  transaction = false;

  async up(runner: QueryRunner): Promise<void> {
    // An index left invalid by a failed CONCURRENTLY build would be kept by IF NOT EXISTS: drop it first.
    await runner.query(
      `DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'tasks' AND c.relname = 'tasks_open_sender_org_idx' AND NOT i.indisvalid) THEN EXECUTE 'DROP INDEX "tasks"."tasks_open_sender_org_idx"'; END IF; END $$`,
    );
    await runner.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS "tasks_open_sender_org_idx" ON "tasks"."tasks" (split_part("sender_handle", '@', 2)) WHERE "state" IN (${OPEN_STATES_SQL})`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX CONCURRENTLY IF EXISTS "tasks"."tasks_open_sender_org_idx"`);
  }
}
