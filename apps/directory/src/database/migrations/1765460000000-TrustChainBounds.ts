import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A trust policy's own chain bounds (docs/chains.md): a JSON object, checked by the relay's one schema before it is written. */
export class TrustChainBounds1765460000000 implements MigrationInterface {
  name = 'TrustChainBounds1765460000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."trust_policies" ADD "chain" jsonb NOT NULL DEFAULT '{}'`);
    await runner.query(`ALTER TABLE "directory"."trust_policies" ADD CONSTRAINT "trust_policies_chain_object" CHECK (jsonb_typeof("chain") = 'object')`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."trust_policies" DROP CONSTRAINT "trust_policies_chain_object"`);
    await runner.query(`ALTER TABLE "directory"."trust_policies" DROP COLUMN "chain"`);
  }
}
