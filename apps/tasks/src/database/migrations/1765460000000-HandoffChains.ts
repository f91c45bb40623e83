import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Handoff chains (docs/chains.md): the handoff a task was made for, its chain's root and its
 * depth; the indexes the chain bounds count on (a chain's tree, a pair's handoffs of the last minute).
 */
export class HandoffChains1765460000000 implements MigrationInterface {
  name = 'HandoffChains1765460000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD "parent_task_id" char(26)`);
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD "root_task_id" char(26)`);
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD "depth" integer NOT NULL DEFAULT 0`);
    // Every task stored before chains is the root of its own.
    await runner.query(`UPDATE "tasks"."tasks" SET "root_task_id" = "id"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" ALTER COLUMN "root_task_id" SET NOT NULL`);
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD CONSTRAINT "tasks_depth_range" CHECK ("depth" >= 0 AND ("depth" = 0) = ("parent_task_id" IS NULL))`);
    await runner.query(`CREATE INDEX "tasks_root_task_idx" ON "tasks"."tasks" ("root_task_id")`);
    await runner.query(`CREATE INDEX "tasks_pair_created_at_idx" ON "tasks"."tasks" ("sender_id", "recipient_id", "created_at")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "tasks"."tasks_pair_created_at_idx"`);
    await runner.query(`DROP INDEX "tasks"."tasks_root_task_idx"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP CONSTRAINT "tasks_depth_range"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP COLUMN "depth"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP COLUMN "root_task_id"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP COLUMN "parent_task_id"`);
  }
}
