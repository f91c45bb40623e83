import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The (issuer, subject) of the IdP tokens that authenticate as an agent, besides its handle claim; one agent per pair. */
export class AgentTokenSubject1765000100000 implements MigrationInterface {
  name = 'AgentTokenSubject1765000100000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."agents" ADD "token_issuer" character varying(512), ADD "token_subject" character varying(255)`);
    await runner.query(
      `ALTER TABLE "directory"."agents" ADD CONSTRAINT "agents_token_subject_pair" CHECK (("token_issuer" IS NULL) = ("token_subject" IS NULL))`,
    );
    await runner.query(`CREATE UNIQUE INDEX "agents_token_subject" ON "directory"."agents" ("token_issuer", "token_subject") WHERE "token_issuer" IS NOT NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "directory"."agents_token_subject"`);
    await runner.query(`ALTER TABLE "directory"."agents" DROP CONSTRAINT "agents_token_subject_pair"`);
    await runner.query(`ALTER TABLE "directory"."agents" DROP COLUMN "token_subject", DROP COLUMN "token_issuer"`);
  }
}
