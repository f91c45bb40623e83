import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Handoff chains (docs/chains.md): the handoff a task was made for, its chain's root (null on a
 * root, which is its own) and its depth; the index a chain's tree is counted on. A pair's handoffs
 * of the last minute are read on the sender's index by creation time. The tasks stored before are
 * roots, as they are.
 */
export class HandoffChains1765460000000 implements MigrationInterface {
  name = 'HandoffChains1765460000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD "parent_task_id" char(26)`);
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD "root_task_id" char(26)`);
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD "depth" integer NOT NULL DEFAULT 0`);
    await runner.query(
      `ALTER TABLE "tasks"."tasks" ADD CONSTRAINT "tasks_depth_range" CHECK ("depth" >= 0 AND ("depth" = 0) = ("parent_task_id" IS NULL) AND ("parent_task_id" IS NULL) = ("root_task_id" IS NULL))`,
    );
    await runner.query(`CREATE INDEX "tasks_root_task_idx" ON "tasks"."tasks" ("root_task_id")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "tasks"."tasks_root_task_idx"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP CONSTRAINT "tasks_depth_range"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP COLUMN "depth"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP COLUMN "root_task_id"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP COLUMN "parent_task_id"`);
  }
}
