import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from '@app/database';

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
    await createIndexConcurrently(
      runner,
      'tasks',
      'tasks_open_sender_org_idx',
      `"tasks"."tasks" (split_part("sender_handle", '@', 2)) WHERE "state" IN (${OPEN_STATES_SQL})`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX CONCURRENTLY IF EXISTS "tasks"."tasks_open_sender_org_idx"`);
  }
}
