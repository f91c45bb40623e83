import type { MigrationInterface, QueryRunner } from 'typeorm';

/** An org's open-handoffs quota (docs/orgs.md#quotas): the handoffs its agents sent that are not finished; null for no limit. */
export class OrgOpenHandoffsQuota1765545300000 implements MigrationInterface {
  name = 'OrgOpenHandoffsQuota1765545300000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."orgs" ADD "quota_open_handoffs" integer`);
    await runner.query(
      `ALTER TABLE "directory"."orgs" ADD CONSTRAINT "orgs_quota_open_handoffs" CHECK ("quota_open_handoffs" IS NULL OR "quota_open_handoffs" >= 0)`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."orgs" DROP CONSTRAINT "orgs_quota_open_handoffs"`);
    await runner.query(`ALTER TABLE "directory"."orgs" DROP COLUMN "quota_open_handoffs"`);
  }
}
