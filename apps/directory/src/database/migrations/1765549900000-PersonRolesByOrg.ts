import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The people given roles in one org, listed by subject (`GET /admin/orgs/{name}/people`). */
export class PersonRolesByOrg1765549900000 implements MigrationInterface {
  name = 'PersonRolesByOrg1765549900000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX "person_roles_org_idx" ON "directory"."person_roles" ("issuer", "org", "subject")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "directory"."person_roles_org_idx"`);
  }
}
