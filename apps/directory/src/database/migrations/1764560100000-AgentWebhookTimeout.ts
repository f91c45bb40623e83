import type { MigrationInterface, QueryRunner } from 'typeorm';

/** An agent may choose how long the notifier waits for its webhook and push receivers (1–30 s). */
export class AgentWebhookTimeout1764560100000 implements MigrationInterface {
  name = 'AgentWebhookTimeout1764560100000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."agents" ADD "webhook_timeout_ms" integer`);
    await runner.query(
      `ALTER TABLE "directory"."agents" ADD CONSTRAINT "agents_webhook_timeout" CHECK ("webhook_timeout_ms" IS NULL OR "webhook_timeout_ms" BETWEEN 1000 AND 30000)`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."agents" DROP CONSTRAINT "agents_webhook_timeout"`);
    await runner.query(`ALTER TABLE "directory"."agents" DROP COLUMN "webhook_timeout_ms"`);
  }
}
