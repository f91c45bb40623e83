import type { MigrationInterface, QueryRunner } from 'typeorm';

/** An org's stored-bytes and upstream-in-flight quotas (docs/orgs.md#quotas); null for no limit. */
export class OrgStoredBytesAndUpstreamQuotas1765870000000 implements MigrationInterface {
  name = 'OrgStoredBytesAndUpstreamQuotas1765870000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."orgs" ADD "quota_stored_bytes" bigint`);
    await runner.query(`ALTER TABLE "directory"."orgs" ADD "quota_upstream_in_flight" integer`);
    await runner.query(
      `ALTER TABLE "directory"."orgs" ADD CONSTRAINT "orgs_quota_stored_bytes" CHECK ("quota_stored_bytes" IS NULL OR "quota_stored_bytes" >= 0)`,
    );
    await runner.query(
      `ALTER TABLE "directory"."orgs" ADD CONSTRAINT "orgs_quota_upstream_in_flight" CHECK ("quota_upstream_in_flight" IS NULL OR "quota_upstream_in_flight" >= 1)`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."orgs" DROP CONSTRAINT "orgs_quota_upstream_in_flight"`);
    await runner.query(`ALTER TABLE "directory"."orgs" DROP CONSTRAINT "orgs_quota_stored_bytes"`);
    await runner.query(`ALTER TABLE "directory"."orgs" DROP COLUMN "quota_upstream_in_flight"`);
    await runner.query(`ALTER TABLE "directory"."orgs" DROP COLUMN "quota_stored_bytes"`);
  }
}
