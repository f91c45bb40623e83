import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The admin audit log: every change made through the admin API, newest read first by id. */
export class AdminAudit1764560000000 implements MigrationInterface {
  name = 'AdminAudit1764560000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "directory"."admin_audit" (
        "id" bigserial NOT NULL,
        "at" timestamptz NOT NULL DEFAULT now(),
        "actor" varchar(64) NOT NULL,
        "action" varchar(64) NOT NULL,
        "target" varchar(512),
        "detail" jsonb NOT NULL DEFAULT '{}',
        CONSTRAINT "admin_audit_pkey" PRIMARY KEY ("id")
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "directory"."admin_audit"`);
  }
}
