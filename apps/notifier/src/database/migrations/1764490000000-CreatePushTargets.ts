import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The notifier's copy of each task's A2A push-notification configs, kept from the tasks service's events. */
export class CreatePushTargets1764490000000 implements MigrationInterface {
  name = 'CreatePushTargets1764490000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "notifier"."push_targets" (
        "task_id" varchar(64) NOT NULL,
        "config_id" varchar(255) NOT NULL,
        "owner_handle" varchar(255) NOT NULL,
        "version" varchar(8) NOT NULL,
        "url" varchar(2048) NOT NULL,
        "token" varchar(4096),
        "auth_scheme" varchar(64),
        "auth_credentials" varchar(4096),
        "occurred_at" timestamptz NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "push_targets_pkey" PRIMARY KEY ("task_id", "config_id"),
        CONSTRAINT "push_targets_version" CHECK ("version" IN ('0.3', '1.0'))
      )`);
    // A push delivery's target is `push:<config id>`, and a config id may be 255 characters long.
    await runner.query(`ALTER TABLE "notifier"."deliveries" ALTER COLUMN "target_ref" TYPE varchar(300)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "notifier"."deliveries" ALTER COLUMN "target_ref" TYPE varchar(255)`);
    await runner.query(`DROP TABLE "notifier"."push_targets"`);
  }
}
