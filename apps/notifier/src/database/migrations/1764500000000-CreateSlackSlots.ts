import type { MigrationInterface, QueryRunner } from 'typeorm';

/** When each Slack incoming webhook may be posted to next, shared by every notifier replica. */
export class CreateSlackSlots1764500000000 implements MigrationInterface {
  name = 'CreateSlackSlots1764500000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "notifier"."slack_slots" (
        "url_hash" char(64) NOT NULL,
        "next_at" timestamptz NOT NULL,
        CONSTRAINT "slack_slots_pkey" PRIMARY KEY ("url_hash")
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "notifier"."slack_slots"`);
  }
}
