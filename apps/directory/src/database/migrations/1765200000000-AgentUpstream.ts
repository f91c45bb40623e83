import type { MigrationInterface, QueryRunner } from 'typeorm';

/** An agent that runs its own A2A server keeps the interface read from its card (docs/decisions/0025-upstream-agents-delivered-by-the-notifier.md). */
export class AgentUpstream1765200000000 implements MigrationInterface {
  name = 'AgentUpstream1765200000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."agents" ADD "upstream" jsonb`);
    await runner.query(
      `ALTER TABLE "directory"."agents" ADD CONSTRAINT "agents_upstream_object" CHECK ("upstream" IS NULL OR jsonb_typeof("upstream") = 'object')`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."agents" DROP CONSTRAINT "agents_upstream_object"`);
    await runner.query(`ALTER TABLE "directory"."agents" DROP COLUMN "upstream"`);
  }
}
