import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A chain's tree read in order (the admin API's chain view: by depth, then creation, up to a
 * limit) on one index, which still counts a tree as the chain bounds do: the root's index gains
 * the depth and the id (a ULID, in creation order).
 */
export class ChainTreeIndex1765523300000 implements MigrationInterface {
  name = 'ChainTreeIndex1765523300000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX "tasks_root_depth_idx" ON "tasks"."tasks" ("root_task_id", "depth", "id")`);
    await runner.query(`DROP INDEX "tasks"."tasks_root_task_idx"`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX "tasks_root_task_idx" ON "tasks"."tasks" ("root_task_id")`);
    await runner.query(`DROP INDEX "tasks"."tasks_root_depth_idx"`);
  }
}
