import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Orgs as records (docs/orgs.md). Every org an existing handle names becomes one, made `first_use`
 * with the relay's defaults and no quota of its own, so that a relay with today's agents keeps
 * working unchanged.
 */
export class Orgs1765536600000 implements MigrationInterface {
  name = 'Orgs1765536600000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `CREATE TABLE "directory"."orgs" (
        "name" varchar(127) NOT NULL,
        "display_name" varchar(200),
        "defaults" jsonb NOT NULL DEFAULT '{}',
        "quota_agents" integer,
        "quota_requests_per_minute" integer,
        "origin" varchar(16) NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "orgs_pkey" PRIMARY KEY ("name"),
        CONSTRAINT "orgs_name_format" CHECK ("name" ~ '^[a-z0-9][a-z0-9.-]{0,126}$'),
        CONSTRAINT "orgs_display_name_not_blank" CHECK ("display_name" IS NULL OR btrim("display_name") <> ''),
        CONSTRAINT "orgs_origin" CHECK ("origin" IN ('admin', 'first_use')),
        CONSTRAINT "orgs_defaults_object" CHECK (jsonb_typeof("defaults") = 'object'),
        CONSTRAINT "orgs_quota_agents" CHECK ("quota_agents" IS NULL OR "quota_agents" >= 0),
        CONSTRAINT "orgs_quota_requests_per_minute" CHECK ("quota_requests_per_minute" IS NULL OR "quota_requests_per_minute" >= 1)
      )`,
    );
    await runner.query(
      `INSERT INTO "directory"."orgs" ("name", "origin")
       SELECT DISTINCT split_part("handle", '@', 2), 'first_use' FROM "directory"."agents"
       ON CONFLICT ("name") DO NOTHING`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "directory"."orgs"`);
  }
}
