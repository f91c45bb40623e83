import type { MigrationInterface, QueryRunner } from 'typeorm';

const TRANSITIONS = `'create', 'accept', 'complete', 'cancel', 'decline', 'fail', 'request_input', 'resume', 'approve', 'deny', 'expire'`;

async function replaceTransitionCheck(runner: QueryRunner, transitions: string): Promise<void> {
  await runner.query(`ALTER TABLE "tasks"."audit_log" DROP CONSTRAINT "audit_log_transition_known"`);
  await runner.query(`ALTER TABLE "tasks"."audit_log" ADD CONSTRAINT "audit_log_transition_known" CHECK ("transition" IN (${transitions}))`);
}

/**
 * Tool prompts answered by people (docs/decisions/0031-tool-prompts-answered-by-people.md): which
 * rule gave a handoff's tool prompts to the approvers, and their answers; the audit log's
 * allow_tool and deny_tool; the index of the approvers' queue.
 */
export class ToolPromptAnswers1765440000000 implements MigrationInterface {
  name = 'ToolPromptAnswers1765440000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD "tool_prompts" jsonb`);
    await runner.query(
      `ALTER TABLE "tasks"."tasks" ADD CONSTRAINT "tasks_tool_prompts_object" CHECK ("tool_prompts" IS NULL OR jsonb_typeof("tool_prompts") = 'object')`,
    );
    await replaceTransitionCheck(runner, `${TRANSITIONS}, 'allow_tool', 'deny_tool'`);
    // The approvers' queue reads the tasks whose tool prompts people answer, and no others.
    await runner.query(`CREATE INDEX "tasks_tool_prompts_idx" ON "tasks"."tasks" ("id") WHERE "tool_prompts" IS NOT NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "tasks"."tasks_tool_prompts_idx"`);
    await runner.query(`DELETE FROM "tasks"."audit_log" WHERE "transition" IN ('allow_tool', 'deny_tool')`);
    await replaceTransitionCheck(runner, TRANSITIONS);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP CONSTRAINT "tasks_tool_prompts_object"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP COLUMN "tool_prompts"`);
  }
}
