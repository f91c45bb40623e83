import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Attempts are recorded before their request is sent: the duration is unknown until the outcome is. */
export class RecordAttemptsBeforeSending1764520000000 implements MigrationInterface {
  name = 'RecordAttemptsBeforeSending1764520000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "notifier"."delivery_attempts" ALTER COLUMN "duration_ms" DROP NOT NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`UPDATE "notifier"."delivery_attempts" SET "duration_ms" = 0 WHERE "duration_ms" IS NULL`);
    await runner.query(`ALTER TABLE "notifier"."delivery_attempts" ALTER COLUMN "duration_ms" SET NOT NULL`);
  }
}
