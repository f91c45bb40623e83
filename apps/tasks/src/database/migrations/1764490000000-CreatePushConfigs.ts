import type { MigrationInterface, QueryRunner } from 'typeorm';

const TASK_EVENT_TYPES = `'created', 'message_appended', 'accepted', 'input_required', 'completed', 'failed', 'rejected', 'canceled'`;

/**
 * A2A push-notification configs of a task, and the outbox admitting their change events
 * (`relay.events.push_config.set|deleted`) beside the task events, so the notifier learns of a
 * config in the same order as the task's events.
 */
export class CreatePushConfigs1764490000000 implements MigrationInterface {
  name = 'CreatePushConfigs1764490000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "tasks"."push_configs" (
        "task_id" char(26) NOT NULL,
        "id" varchar(255) NOT NULL,
        "owner_id" varchar(64) NOT NULL,
        "owner_handle" varchar(255) NOT NULL,
        "version" varchar(8) NOT NULL,
        "url" varchar(2048) NOT NULL,
        "token" varchar(4096),
        "auth_schemes" text[],
        "auth_credentials" varchar(4096),
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "push_configs_pkey" PRIMARY KEY ("task_id", "id"),
        CONSTRAINT "push_configs_thread_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"."threads" ("id") ON DELETE CASCADE,
        CONSTRAINT "push_configs_version" CHECK ("version" IN ('0.3', '1.0')),
        CONSTRAINT "push_configs_url_http" CHECK ("url" ~ '^https?://'),
        CONSTRAINT "push_configs_auth_schemes" CHECK ("auth_schemes" IS NULL OR cardinality("auth_schemes") >= 1),
        CONSTRAINT "push_configs_credentials_need_scheme" CHECK ("auth_credentials" IS NULL OR "auth_schemes" IS NOT NULL)
      )`);
    await runner.query(`CREATE INDEX "push_configs_task_created_idx" ON "tasks"."push_configs" ("task_id", "created_at")`);
    await runner.query(`ALTER TABLE "tasks"."outbox_events" DROP CONSTRAINT "outbox_events_type_known"`);
    await runner.query(`ALTER TABLE "tasks"."outbox_events" DROP CONSTRAINT "outbox_events_subject_matches_type"`);
    await runner.query(`
      ALTER TABLE "tasks"."outbox_events" ADD CONSTRAINT "outbox_events_type_known"
        CHECK ("type" IN (${TASK_EVENT_TYPES}, 'push_config_set', 'push_config_deleted'))`);
    await runner.query(`
      ALTER TABLE "tasks"."outbox_events" ADD CONSTRAINT "outbox_events_subject_matches_type" CHECK (
        ("type" IN (${TASK_EVENT_TYPES}) AND "subject" = 'relay.events.task.' || "type")
        OR ("type" = 'push_config_set' AND "subject" = 'relay.events.push_config.set')
        OR ("type" = 'push_config_deleted' AND "subject" = 'relay.events.push_config.deleted'))`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DELETE FROM "tasks"."outbox_events" WHERE "type" IN ('push_config_set', 'push_config_deleted')`);
    await runner.query(`ALTER TABLE "tasks"."outbox_events" DROP CONSTRAINT "outbox_events_type_known"`);
    await runner.query(`ALTER TABLE "tasks"."outbox_events" DROP CONSTRAINT "outbox_events_subject_matches_type"`);
    await runner.query(`ALTER TABLE "tasks"."outbox_events" ADD CONSTRAINT "outbox_events_type_known" CHECK ("type" IN (${TASK_EVENT_TYPES}))`);
    await runner.query(
      `ALTER TABLE "tasks"."outbox_events" ADD CONSTRAINT "outbox_events_subject_matches_type" CHECK ("subject" = 'relay.events.task.' || "type")`,
    );
    await runner.query(`DROP TABLE "tasks"."push_configs"`);
  }
}
