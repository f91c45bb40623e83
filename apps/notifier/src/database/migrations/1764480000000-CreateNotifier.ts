import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The notifier's own copy of delivery targets (from the directory's agent events), the webhook
 * signing secrets it owns, and the delivery log with every attempt.
 */
export class CreateNotifier1764480000000 implements MigrationInterface {
  name = 'CreateNotifier1764480000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "notifier"."agent_targets" (
        "agent_id" varchar(64) NOT NULL,
        "handle" varchar(255) NOT NULL,
        "name" varchar(200) NOT NULL,
        "notification_webhook_url" varchar(2048),
        "slack_webhook_url" varchar(2048),
        "disabled" boolean NOT NULL DEFAULT false,
        "source_event_id" uuid NOT NULL,
        "occurred_at" timestamptz NOT NULL,
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "agent_targets_pkey" PRIMARY KEY ("agent_id"),
        CONSTRAINT "agent_targets_handle_key" UNIQUE ("handle")
      )`);
    await runner.query(`
      CREATE TABLE "notifier"."webhook_secrets" (
        "handle" varchar(255) NOT NULL,
        "secret" text NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "rotated_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "webhook_secrets_pkey" PRIMARY KEY ("handle"),
        CONSTRAINT "webhook_secrets_format" CHECK ("secret" ~ '^whsec_[A-Za-z0-9+/=]{32,}$')
      )`);
    await runner.query(`
      CREATE TABLE "notifier"."deliveries" (
        "id" uuid NOT NULL,
        "event_id" uuid NOT NULL,
        "task_id" varchar(255) NOT NULL,
        "event" varchar(64) NOT NULL,
        "channel" varchar(16) NOT NULL,
        "target_handle" varchar(255) NOT NULL,
        "target_ref" varchar(255) NOT NULL,
        "url" varchar(2048) NOT NULL,
        "content_type" varchar(100) NOT NULL,
        "headers" jsonb NOT NULL DEFAULT '{}',
        "body" jsonb NOT NULL,
        "status" varchar(16) NOT NULL DEFAULT 'pending',
        "attempts" integer NOT NULL DEFAULT 0,
        "round_attempts" integer NOT NULL DEFAULT 0,
        "next_attempt_at" timestamptz,
        "locked_until" timestamptz,
        "last_status_code" integer,
        "last_error" text,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        "delivered_at" timestamptz,
        CONSTRAINT "deliveries_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "deliveries_event_target_key" UNIQUE ("event_id", "channel", "target_ref"),
        CONSTRAINT "deliveries_channel" CHECK ("channel" IN ('webhook', 'slack', 'push')),
        CONSTRAINT "deliveries_status" CHECK ("status" IN ('pending', 'failed', 'succeeded', 'dead')),
        CONSTRAINT "deliveries_attempts" CHECK ("attempts" >= 0 AND "round_attempts" >= 0 AND "round_attempts" <= "attempts"),
        CONSTRAINT "deliveries_schedule" CHECK (("status" IN ('pending', 'failed')) = ("next_attempt_at" IS NOT NULL)),
        CONSTRAINT "deliveries_delivered" CHECK (("status" = 'succeeded') = ("delivered_at" IS NOT NULL))
      )`);
    await runner.query(`CREATE INDEX "deliveries_due_idx" ON "notifier"."deliveries" ("next_attempt_at") WHERE "status" IN ('pending', 'failed')`);
    await runner.query(`CREATE INDEX "deliveries_status_created_idx" ON "notifier"."deliveries" ("status", "created_at" DESC)`);
    await runner.query(`CREATE INDEX "deliveries_task_idx" ON "notifier"."deliveries" ("task_id")`);
    await runner.query(`
      CREATE TABLE "notifier"."delivery_attempts" (
        "id" bigserial NOT NULL,
        "delivery_id" uuid NOT NULL,
        "attempt_no" integer NOT NULL,
        "status_code" integer,
        "error" text,
        "duration_ms" integer NOT NULL,
        "attempted_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "delivery_attempts_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "delivery_attempts_delivery_fkey" FOREIGN KEY ("delivery_id") REFERENCES "notifier"."deliveries" ("id") ON DELETE CASCADE,
        CONSTRAINT "delivery_attempts_no" CHECK ("attempt_no" >= 1)
      )`);
    await runner.query(`CREATE INDEX "delivery_attempts_delivery_idx" ON "notifier"."delivery_attempts" ("delivery_id", "attempt_no")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "notifier"."delivery_attempts"`);
    await runner.query(`DROP TABLE "notifier"."deliveries"`);
    await runner.query(`DROP TABLE "notifier"."webhook_secrets"`);
    await runner.query(`DROP TABLE "notifier"."agent_targets"`);
  }
}
