import type { MigrationInterface, QueryRunner } from 'typeorm';

/** An org's chain bounds (docs/chains.md): a JSON object, checked by the relay's one schema before it is written; `{}` for an org with none of its own. */
export class OrgChainBounds1765541900000 implements MigrationInterface {
  name = 'OrgChainBounds1765541900000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."orgs" ADD "chain" jsonb NOT NULL DEFAULT '{}'`);
    await runner.query(`ALTER TABLE "directory"."orgs" ADD CONSTRAINT "orgs_chain_object" CHECK (jsonb_typeof("chain") = 'object')`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."orgs" DROP CONSTRAINT "orgs_chain_object"`);
    await runner.query(`ALTER TABLE "directory"."orgs" DROP COLUMN "chain"`);
  }
}
