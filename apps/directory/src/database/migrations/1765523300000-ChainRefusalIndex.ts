import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The chain bounds' refusals (`handoff.refuse` rows) of one chain, read by the chain's root, newest first. */
export class ChainRefusalIndex1765523300000 implements MigrationInterface {
  name = 'ChainRefusalIndex1765523300000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `CREATE INDEX "admin_audit_chain_refusal_idx" ON "directory"."admin_audit" (("detail"->>'root_task_id'), "id") WHERE "action" = 'handoff.refuse'`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "directory"."admin_audit_chain_refusal_idx"`);
  }
}
