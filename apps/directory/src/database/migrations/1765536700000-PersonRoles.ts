import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Roles an admin gives people through the admin API, per org or relay-wide (docs/orgs.md#scoped-roles); none exist before. */
export class PersonRoles1765536700000 implements MigrationInterface {
  name = 'PersonRoles1765536700000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `CREATE TABLE "directory"."person_roles" (
        "issuer" varchar(512) NOT NULL,
        "subject" varchar(255) NOT NULL,
        "org" varchar(127) NOT NULL,
        "role" varchar(16) NOT NULL,
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "person_roles_pkey" PRIMARY KEY ("issuer", "subject", "org"),
        CONSTRAINT "person_roles_org" CHECK ("org" = '*' OR "org" ~ '^[a-z0-9][a-z0-9.-]{0,126}$'),
        CONSTRAINT "person_roles_role" CHECK ("role" IN ('auditor', 'viewer', 'approver', 'operator', 'admin'))
      )`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "directory"."person_roles"`);
  }
}
