import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The polls of an upstream task in a row that timed out: past RELAY_UPSTREAM_MAX_TIMED_OUT_POLLS its relay task fails. */
export class UpstreamTimedOutPolls1765700000000 implements MigrationInterface {
  name = 'UpstreamTimedOutPolls1765700000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "notifier"."upstream_tasks" ADD "timed_out_polls" integer NOT NULL DEFAULT 0`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "notifier"."upstream_tasks" DROP COLUMN "timed_out_polls"`);
  }
}
