import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each delivery names its destination (host and port: the unit of the per-destination share of
 * slots and of the circuit breaker) and the request timeout its owner agent chose; the agent
 * targets keep that timeout from the agent events.
 */
export class FairDelivery1764560000000 implements MigrationInterface {
  name = 'FairDelivery1764560000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "notifier"."deliveries" ADD "destination" varchar(300)`);
    await runner.query(
      `UPDATE "notifier"."deliveries" SET "destination" = COALESCE(lower(substring("url" from '^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^@/?#]*@)?([^/?#]+)')), 'invalid')`,
    );
    await runner.query(`ALTER TABLE "notifier"."deliveries" ALTER COLUMN "destination" SET NOT NULL`);
    await runner.query(`ALTER TABLE "notifier"."deliveries" ADD "timeout_ms" integer`);
    await runner.query(
      `ALTER TABLE "notifier"."deliveries" ADD CONSTRAINT "deliveries_timeout" CHECK ("timeout_ms" IS NULL OR "timeout_ms" BETWEEN 1000 AND 30000)`,
    );
    await runner.query(`ALTER TABLE "notifier"."agent_targets" ADD "webhook_timeout_ms" integer`);
    await runner.query(
      `ALTER TABLE "notifier"."agent_targets" ADD CONSTRAINT "agent_targets_webhook_timeout" CHECK ("webhook_timeout_ms" IS NULL OR "webhook_timeout_ms" BETWEEN 1000 AND 30000)`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "notifier"."agent_targets" DROP CONSTRAINT "agent_targets_webhook_timeout"`);
    await runner.query(`ALTER TABLE "notifier"."agent_targets" DROP COLUMN "webhook_timeout_ms"`);
    await runner.query(`ALTER TABLE "notifier"."deliveries" DROP CONSTRAINT "deliveries_timeout"`);
    await runner.query(`ALTER TABLE "notifier"."deliveries" DROP COLUMN "timeout_ms"`);
    await runner.query(`ALTER TABLE "notifier"."deliveries" DROP COLUMN "destination"`);
  }
}
