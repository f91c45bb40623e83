import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A trust policy's hold rules (docs/decisions/0024-held-handoffs.md): a JSON array, checked by the relay's one schema before it is written. */
export class TrustHoldRules1765300000000 implements MigrationInterface {
  name = 'TrustHoldRules1765300000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."trust_policies" ADD "hold" jsonb NOT NULL DEFAULT '[]'`);
    await runner.query(`ALTER TABLE "directory"."trust_policies" ADD CONSTRAINT "trust_policies_hold_array" CHECK (jsonb_typeof("hold") = 'array')`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."trust_policies" DROP CONSTRAINT "trust_policies_hold_array"`);
    await runner.query(`ALTER TABLE "directory"."trust_policies" DROP COLUMN "hold"`);
  }
}
