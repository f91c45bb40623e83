import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The owner of an agent for four eyes (docs/decisions/0024-held-handoffs.md): their account at the
 * console's OpenID Provider, and whether the agent's email was verified as theirs. Existing agents
 * keep their email, unverified, and have no owner account: four eyes refuse their handoffs until an
 * admin records the owner.
 */
export class AgentOwner1765510000000 implements MigrationInterface {
  name = 'AgentOwner1765510000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."agents" ADD "owner_issuer" varchar(512), ADD "owner_subject" varchar(255)`);
    await runner.query(`ALTER TABLE "directory"."agents" ADD "email_verified" boolean NOT NULL DEFAULT false`);
    await runner.query(`ALTER TABLE "directory"."agents" ADD CONSTRAINT "agents_owner_pair" CHECK (("owner_issuer" IS NULL) = ("owner_subject" IS NULL))`);
    await runner.query(`ALTER TABLE "directory"."agents" ADD CONSTRAINT "agents_email_verified_has_email" CHECK (NOT "email_verified" OR "email" IS NOT NULL)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."agents" DROP CONSTRAINT "agents_email_verified_has_email"`);
    await runner.query(`ALTER TABLE "directory"."agents" DROP CONSTRAINT "agents_owner_pair"`);
    await runner.query(`ALTER TABLE "directory"."agents" DROP COLUMN "email_verified", DROP COLUMN "owner_subject", DROP COLUMN "owner_issuer"`);
  }
}
