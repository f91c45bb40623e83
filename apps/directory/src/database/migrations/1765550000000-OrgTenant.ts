import type { MigrationInterface, QueryRunner } from 'typeorm';

/** An org's A2A tenant (docs/orgs.md#an-orgs-own-a2a-address): null for none, unique among orgs. */
export class OrgTenant1765550000000 implements MigrationInterface {
  name = 'OrgTenant1765550000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."orgs" ADD "tenant" character varying(63)`);
    await runner.query(
      `ALTER TABLE "directory"."orgs" ADD CONSTRAINT "orgs_tenant_format" CHECK ("tenant" IS NULL OR ("tenant" ~ '^[a-z0-9][a-z0-9._-]{0,62}$' AND "tenant" NOT IN ('tasks', 'v1')))`,
    );
    await runner.query(`ALTER TABLE "directory"."orgs" ADD CONSTRAINT "orgs_tenant_key" UNIQUE ("tenant")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."orgs" DROP CONSTRAINT "orgs_tenant_key"`);
    await runner.query(`ALTER TABLE "directory"."orgs" DROP CONSTRAINT "orgs_tenant_format"`);
    await runner.query(`ALTER TABLE "directory"."orgs" DROP COLUMN "tenant"`);
  }
}
