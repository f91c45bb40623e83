import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * OAuth2 client credentials as an upstream agent's credential: the scheme `oauth2`, whose client
 * id, token URL, scope and resource are kept beside the sealed client secret.
 */
export class UpstreamOAuth21765260000000 implements MigrationInterface {
  name = 'UpstreamOAuth21765260000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "notifier"."upstream_credentials" ADD "oauth2" jsonb`);
    await runner.query(`ALTER TABLE "notifier"."upstream_credentials" DROP CONSTRAINT "upstream_credentials_scheme"`);
    await runner.query(
      `ALTER TABLE "notifier"."upstream_credentials" ADD CONSTRAINT "upstream_credentials_scheme" CHECK ("scheme" IN ('api_key', 'bearer', 'oauth2'))`,
    );
    await runner.query(
      `ALTER TABLE "notifier"."upstream_credentials" ADD CONSTRAINT "upstream_credentials_oauth2" CHECK (("scheme" = 'oauth2') = ("oauth2" IS NOT NULL))`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DELETE FROM "notifier"."upstream_credentials" WHERE "scheme" = 'oauth2'`);
    await runner.query(`ALTER TABLE "notifier"."upstream_credentials" DROP CONSTRAINT "upstream_credentials_oauth2"`);
    await runner.query(`ALTER TABLE "notifier"."upstream_credentials" DROP CONSTRAINT "upstream_credentials_scheme"`);
    await runner.query(`ALTER TABLE "notifier"."upstream_credentials" ADD CONSTRAINT "upstream_credentials_scheme" CHECK ("scheme" IN ('api_key', 'bearer'))`);
    await runner.query(`ALTER TABLE "notifier"."upstream_credentials" DROP COLUMN "oauth2"`);
  }
}
