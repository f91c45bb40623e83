import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Upstream agents (docs/decisions/0025-upstream-agents-delivered-by-the-notifier.md): an agent
 * target may name its A2A server; deliveries get the `upstream` channel; the credential for each
 * upstream agent is kept sealed; each delivered task is followed beside the upstream task it became.
 */
export class UpstreamAgents1765200000000 implements MigrationInterface {
  name = 'UpstreamAgents1765200000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "notifier"."agent_targets" ADD "upstream" jsonb`);
    await runner.query(`ALTER TABLE "notifier"."deliveries" DROP CONSTRAINT "deliveries_channel"`);
    await runner.query(`ALTER TABLE "notifier"."deliveries" ADD CONSTRAINT "deliveries_channel" CHECK ("channel" IN ('webhook', 'slack', 'push', 'upstream'))`);
    await runner.query(
      `CREATE TABLE "notifier"."upstream_credentials" (
        "handle" varchar(255) NOT NULL,
        "scheme" varchar(16) NOT NULL,
        "header_name" varchar(128) NOT NULL,
        "secret" text NOT NULL,
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "upstream_credentials_scheme" CHECK ("scheme" IN ('api_key', 'bearer')),
        CONSTRAINT "upstream_credentials_pkey" PRIMARY KEY ("handle")
      )`,
    );
    await runner.query(
      `CREATE TABLE "notifier"."upstream_tasks" (
        "task_id" varchar(255) NOT NULL,
        "recipient" jsonb NOT NULL,
        "sender" varchar(255) NOT NULL,
        "upstream_task_id" varchar(255),
        "upstream_context_id" varchar(255),
        "answer" jsonb,
        "status" varchar(16) NOT NULL,
        "reported" jsonb NOT NULL,
        "next_poll_at" TIMESTAMP WITH TIME ZONE,
        "poll_interval_ms" integer NOT NULL,
        "locked_until" TIMESTAMP WITH TIME ZONE,
        "polls" integer NOT NULL DEFAULT 0,
        "last_error" text,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "upstream_tasks_status" CHECK ("status" IN ('following', 'done')),
        CONSTRAINT "upstream_tasks_schedule" CHECK (("status" = 'following') = ("next_poll_at" IS NOT NULL)),
        CONSTRAINT "upstream_tasks_pkey" PRIMARY KEY ("task_id")
      )`,
    );
    await runner.query(`CREATE INDEX "upstream_tasks_due_idx" ON "notifier"."upstream_tasks" ("next_poll_at") WHERE "status" = 'following'`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "notifier"."upstream_tasks"`);
    await runner.query(`DROP TABLE "notifier"."upstream_credentials"`);
    await runner.query(`DELETE FROM "notifier"."deliveries" WHERE "channel" = 'upstream'`);
    await runner.query(`ALTER TABLE "notifier"."deliveries" DROP CONSTRAINT "deliveries_channel"`);
    await runner.query(`ALTER TABLE "notifier"."deliveries" ADD CONSTRAINT "deliveries_channel" CHECK ("channel" IN ('webhook', 'slack', 'push'))`);
    await runner.query(`ALTER TABLE "notifier"."agent_targets" DROP COLUMN "upstream"`);
  }
}
