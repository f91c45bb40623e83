import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Each org's approvals Slack channel (docs/orgs.md#approvals-notifications), its URL sealed. */
export class OrgApprovalChannels1765900000000 implements MigrationInterface {
  name = 'OrgApprovalChannels1765900000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `CREATE TABLE "notifier"."org_approval_channels" (
         "org" varchar(127) NOT NULL,
         "slack_url" text NOT NULL,
         "slack_host" varchar(255) NOT NULL,
         "updated_at" timestamptz NOT NULL DEFAULT now(),
         CONSTRAINT "org_approval_channels_pkey" PRIMARY KEY ("org")
       )`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "notifier"."org_approval_channels"`);
  }
}
