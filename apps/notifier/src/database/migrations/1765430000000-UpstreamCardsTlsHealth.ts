import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Upstream agents' cards refreshed with operator review, mTLS client identities (the key sealed),
 * health per upstream, and the calls made to an upstream for each relay task.
 */
export class UpstreamCardsTlsHealth1765430000000 implements MigrationInterface {
  name = 'UpstreamCardsTlsHealth1765430000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `CREATE TABLE "notifier"."upstream_agents" (
        "handle" varchar(255) NOT NULL,
        "accepted" jsonb,
        "pending" jsonb,
        "pending_card" jsonb,
        "rejected_digest" varchar(64),
        "last_refresh_at" TIMESTAMP WITH TIME ZONE,
        "last_refresh_error" text,
        "last_success_at" TIMESTAMP WITH TIME ZONE,
        "last_failure_at" TIMESTAMP WITH TIME ZONE,
        "last_failure_method" varchar(32),
        "last_failure_reason" text,
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "upstream_agents_pending" CHECK (("pending" IS NULL) = ("pending_card" IS NULL)),
        CONSTRAINT "upstream_agents_pkey" PRIMARY KEY ("handle")
      )`,
    );
    await runner.query(
      `CREATE TABLE "notifier"."upstream_tls" (
        "handle" varchar(255) NOT NULL,
        "client_cert" text NOT NULL,
        "client_key" text NOT NULL,
        "ca" text,
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "upstream_tls_pkey" PRIMARY KEY ("handle")
      )`,
    );
    await runner.query(
      `CREATE TABLE "notifier"."upstream_calls" (
        "id" bigserial NOT NULL,
        "task_id" varchar(255) NOT NULL,
        "handle" varchar(255) NOT NULL,
        "method" varchar(32) NOT NULL,
        "outcome" varchar(32) NOT NULL,
        "status_code" integer,
        "duration_ms" integer NOT NULL,
        "error" text,
        "at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "upstream_calls_pkey" PRIMARY KEY ("id")
      )`,
    );
    await runner.query(`CREATE INDEX "upstream_calls_task_idx" ON "notifier"."upstream_calls" ("task_id", "id")`);
    await runner.query(`CREATE INDEX "upstream_calls_at_idx" ON "notifier"."upstream_calls" ("at")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "notifier"."upstream_calls"`);
    await runner.query(`DROP TABLE "notifier"."upstream_tls"`);
    await runner.query(`DROP TABLE "notifier"."upstream_agents"`);
  }
}
