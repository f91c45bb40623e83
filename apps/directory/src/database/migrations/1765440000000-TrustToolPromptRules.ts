import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A trust policy's tool-prompt rules (docs/decisions/0031-tool-prompts-answered-by-people.md): a JSON array, checked by the relay's one schema before it is written. */
export class TrustToolPromptRules1765440000000 implements MigrationInterface {
  name = 'TrustToolPromptRules1765440000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."trust_policies" ADD "tool_prompts" jsonb NOT NULL DEFAULT '[]'`);
    await runner.query(
      `ALTER TABLE "directory"."trust_policies" ADD CONSTRAINT "trust_policies_tool_prompts_array" CHECK (jsonb_typeof("tool_prompts") = 'array')`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."trust_policies" DROP CONSTRAINT "trust_policies_tool_prompts_array"`);
    await runner.query(`ALTER TABLE "directory"."trust_policies" DROP COLUMN "tool_prompts"`);
  }
}
