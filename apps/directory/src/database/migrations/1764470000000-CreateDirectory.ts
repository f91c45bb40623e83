import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Agents, their hashed API keys and their trust policies, with the invariants as constraints. */
export class CreateDirectory1764470000000 implements MigrationInterface {
  name = 'CreateDirectory1764470000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "directory"."agents" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "handle" varchar(255) NOT NULL,
        "name" varchar(200) NOT NULL,
        "role" varchar(100),
        "description" text,
        "skills" text[] NOT NULL DEFAULT '{}',
        "metadata" jsonb NOT NULL DEFAULT '{}',
        "email" varchar(320),
        "notification_webhook_url" varchar(2048),
        "slack_webhook_url" varchar(2048),
        "disabled_at" timestamptz,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "agents_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "agents_handle_key" UNIQUE ("handle"),
        CONSTRAINT "agents_handle_format" CHECK ("handle" ~ '^[a-z0-9][a-z0-9._-]{0,127}@[a-z0-9][a-z0-9.-]{0,126}$'),
        CONSTRAINT "agents_name_not_blank" CHECK (btrim("name") <> ''),
        CONSTRAINT "agents_metadata_object" CHECK (jsonb_typeof("metadata") = 'object'),
        CONSTRAINT "agents_webhook_url_http" CHECK ("notification_webhook_url" IS NULL OR "notification_webhook_url" ~ '^https?://'),
        CONSTRAINT "agents_slack_url_http" CHECK ("slack_webhook_url" IS NULL OR "slack_webhook_url" ~ '^https?://')
      )`);
    await runner.query(`
      CREATE TABLE "directory"."api_keys" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "agent_id" uuid NOT NULL,
        "key_hash" char(64) NOT NULL,
        "prefix" varchar(16) NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "revoked_at" timestamptz,
        CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "api_keys_key_hash_key" UNIQUE ("key_hash"),
        CONSTRAINT "api_keys_agent_prefix_key" UNIQUE ("agent_id", "prefix"),
        CONSTRAINT "api_keys_agent_fk" FOREIGN KEY ("agent_id") REFERENCES "directory"."agents" ("id") ON DELETE CASCADE,
        CONSTRAINT "api_keys_hash_format" CHECK ("key_hash" ~ '^[0-9a-f]{64}$'),
        CONSTRAINT "api_keys_prefix_format" CHECK ("prefix" ~ '^ah_live_[A-Z2-7]{8}$'),
        CONSTRAINT "api_keys_revoked_after_created" CHECK ("revoked_at" IS NULL OR "revoked_at" >= "created_at")
      )`);
    await runner.query(`CREATE INDEX "api_keys_agent_idx" ON "directory"."api_keys" ("agent_id")`);
    await runner.query(`
      CREATE TABLE "directory"."trust_policies" (
        "agent_id" uuid NOT NULL,
        "allow" text[] NOT NULL DEFAULT '{}',
        "block" text[] NOT NULL DEFAULT '{}',
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "trust_policies_pkey" PRIMARY KEY ("agent_id"),
        CONSTRAINT "trust_policies_agent_fk" FOREIGN KEY ("agent_id") REFERENCES "directory"."agents" ("id") ON DELETE CASCADE,
        CONSTRAINT "trust_policies_allow_no_nulls" CHECK (array_position("allow", NULL) IS NULL),
        CONSTRAINT "trust_policies_block_no_nulls" CHECK (array_position("block", NULL) IS NULL)
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "directory"."trust_policies"`);
    await runner.query(`DROP TABLE "directory"."api_keys"`);
    await runner.query(`DROP TABLE "directory"."agents"`);
  }
}
