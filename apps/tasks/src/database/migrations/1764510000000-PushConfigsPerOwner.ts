import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Push-notification config ids are scoped to their owner: each participant of a task has its own
 * id space (and its own quota), so neither can take or probe the other's ids.
 */
export class PushConfigsPerOwner1764510000000 implements MigrationInterface {
  name = 'PushConfigsPerOwner1764510000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "tasks"."push_configs" DROP CONSTRAINT "push_configs_pkey"`);
    await runner.query(`ALTER TABLE "tasks"."push_configs" ADD CONSTRAINT "push_configs_pkey" PRIMARY KEY ("task_id", "owner_id", "id")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    // Ids two owners share on one task cannot both stay: the later one goes.
    await runner.query(`
      DELETE FROM "tasks"."push_configs" later USING "tasks"."push_configs" earlier
       WHERE later."task_id" = earlier."task_id" AND later."id" = earlier."id"
         AND (later."created_at", later."owner_id") > (earlier."created_at", earlier."owner_id")`);
    await runner.query(`ALTER TABLE "tasks"."push_configs" DROP CONSTRAINT "push_configs_pkey"`);
    await runner.query(`ALTER TABLE "tasks"."push_configs" ADD CONSTRAINT "push_configs_pkey" PRIMARY KEY ("task_id", "id")`);
  }
}
