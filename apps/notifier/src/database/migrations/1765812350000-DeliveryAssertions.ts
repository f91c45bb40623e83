import type { MigrationInterface, QueryRunner } from 'typeorm';

/** What each attempt of a delivery asserts of who asked (docs/chains.md#who-asked-signed), recorded from its task event. */
export class DeliveryAssertions1765812350000 implements MigrationInterface {
  name = 'DeliveryAssertions1765812350000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "notifier"."deliveries" ADD "assertion" jsonb`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "notifier"."deliveries" DROP COLUMN "assertion"`);
  }
}
