import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Upstream registrations waiting for the directory to create their agent: nothing of an agent is written before its handle is held. */
export class UpstreamRegistrations1765460000000 implements MigrationInterface {
  name = 'UpstreamRegistrations1765460000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `CREATE TABLE "notifier"."upstream_registrations" (
        "id" uuid NOT NULL,
        "handle" varchar(255) NOT NULL,
        "credential" jsonb,
        "secret" text,
        "tls" jsonb,
        "client_key" text,
        "accepted" jsonb NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "upstream_registrations_credential" CHECK (("credential" IS NULL) = ("secret" IS NULL)),
        CONSTRAINT "upstream_registrations_tls" CHECK (("tls" IS NULL) = ("client_key" IS NULL)),
        CONSTRAINT "upstream_registrations_pkey" PRIMARY KEY ("id")
      )`,
    );
    await runner.query(`CREATE INDEX "upstream_registrations_created_idx" ON "notifier"."upstream_registrations" ("created_at")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "notifier"."upstream_registrations"`);
  }
}
