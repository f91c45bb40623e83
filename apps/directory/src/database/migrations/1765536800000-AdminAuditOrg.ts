import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The org an admin audit row's change belongs to (docs/orgs.md#scoped-roles), so that an org's
 * auditors read only theirs. Existing rows about an agent (their target a handle) take its org;
 * the others (sign-ins, bulk redelivery) stay relay-wide (null).
 */
export class AdminAuditOrg1765536800000 implements MigrationInterface {
  name = 'AdminAuditOrg1765536800000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."admin_audit" ADD "org" varchar(127)`);
    await runner.query(
      `UPDATE "directory"."admin_audit" SET "org" = split_part("target", '@', 2)
       WHERE "target" ~ '^[a-z0-9][a-z0-9._-]{0,127}@[a-z0-9][a-z0-9.-]{0,126}$'`,
    );
    await runner.query(`CREATE INDEX "admin_audit_org" ON "directory"."admin_audit" ("org", "id")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "directory"."admin_audit_org"`);
    await runner.query(`ALTER TABLE "directory"."admin_audit" DROP COLUMN "org"`);
  }
}
