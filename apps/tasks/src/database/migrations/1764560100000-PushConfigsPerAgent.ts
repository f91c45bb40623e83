import type { MigrationInterface, QueryRunner } from 'typeorm';

/** An agent's push configs across its tasks are counted against RELAY_PUSH_CONFIGS_PER_AGENT at every set. */
export class PushConfigsPerAgent1764560100000 implements MigrationInterface {
  name = 'PushConfigsPerAgent1764560100000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX "push_configs_owner_idx" ON "tasks"."push_configs" ("owner_id")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "tasks"."push_configs_owner_idx"`);
  }
}
