import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The person (OIDC `sub` and email) behind an admin change made from a console session they signed in to. */
export class AdminAuditPerson1765000000000 implements MigrationInterface {
  name = 'AdminAuditPerson1765000000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."admin_audit" ADD "actor_sub" varchar(255), ADD "actor_email" varchar(320)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."admin_audit" DROP COLUMN "actor_email", DROP COLUMN "actor_sub"`);
  }
}
