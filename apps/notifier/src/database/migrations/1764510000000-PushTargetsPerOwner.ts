import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Push-notification config ids are scoped to their owner, so two participants of a task may both
 * have a config with the same id: the notifier keys its copies, and the deliveries of an event, by
 * owner too.
 */
export class PushTargetsPerOwner1764510000000 implements MigrationInterface {
  name = 'PushTargetsPerOwner1764510000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "notifier"."push_targets" DROP CONSTRAINT "push_targets_pkey"`);
    await runner.query(`ALTER TABLE "notifier"."push_targets" ADD CONSTRAINT "push_targets_pkey" PRIMARY KEY ("task_id", "owner_handle", "config_id")`);
    await runner.query(`ALTER TABLE "notifier"."deliveries" DROP CONSTRAINT "deliveries_event_target_key"`);
    await runner.query(
      `ALTER TABLE "notifier"."deliveries" ADD CONSTRAINT "deliveries_event_target_key" UNIQUE ("event_id", "channel", "target_handle", "target_ref")`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`
      DELETE FROM "notifier"."deliveries" later USING "notifier"."deliveries" earlier
       WHERE later."event_id" = earlier."event_id" AND later."channel" = earlier."channel" AND later."target_ref" = earlier."target_ref"
         AND (later."created_at", later."id") > (earlier."created_at", earlier."id")`);
    await runner.query(`ALTER TABLE "notifier"."deliveries" DROP CONSTRAINT "deliveries_event_target_key"`);
    await runner.query(`ALTER TABLE "notifier"."deliveries" ADD CONSTRAINT "deliveries_event_target_key" UNIQUE ("event_id", "channel", "target_ref")`);
    await runner.query(`
      DELETE FROM "notifier"."push_targets" later USING "notifier"."push_targets" earlier
       WHERE later."task_id" = earlier."task_id" AND later."config_id" = earlier."config_id"
         AND (later."created_at", later."owner_handle") > (earlier."created_at", earlier."owner_handle")`);
    await runner.query(`ALTER TABLE "notifier"."push_targets" DROP CONSTRAINT "push_targets_pkey"`);
    await runner.query(`ALTER TABLE "notifier"."push_targets" ADD CONSTRAINT "push_targets_pkey" PRIMARY KEY ("task_id", "config_id")`);
  }
}
