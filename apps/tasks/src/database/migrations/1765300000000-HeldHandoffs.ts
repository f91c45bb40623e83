import type { MigrationInterface, QueryRunner } from 'typeorm';

const STATES = `'pending', 'accepted', 'input_required', 'completed', 'cancelled', 'failed', 'rejected'`;
const WITH_HELD = `'held', ${STATES}`;
const TRANSITIONS = `'create', 'accept', 'complete', 'cancel', 'decline', 'fail', 'request_input', 'resume'`;

/**
 * Held handoffs (docs/decisions/0024-held-handoffs.md): the state `held`, the hold itself, its
 * deadline (with the index the expiry sweep reads) and whether the recipient may see the task; the
 * audit log's approve, deny and expire.
 */
export class HeldHandoffs1765300000000 implements MigrationInterface {
  name = 'HeldHandoffs1765300000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD "hold" jsonb`);
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD "hold_expires_at" TIMESTAMP WITH TIME ZONE`);
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD "hidden_from_recipient" boolean NOT NULL DEFAULT false`);
    await this.replaceChecks(runner, WITH_HELD, `${TRANSITIONS}, 'approve', 'deny', 'expire'`);
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD CONSTRAINT "tasks_hold_object" CHECK ("hold" IS NULL OR jsonb_typeof("hold") = 'object')`);
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD CONSTRAINT "tasks_hidden_only_when_held" CHECK (NOT "hidden_from_recipient" OR "hold" IS NOT NULL)`);
    await runner.query(
      `ALTER TABLE "tasks"."tasks" ADD CONSTRAINT "tasks_held_is_hidden" CHECK ("state" <> 'held' OR ("hidden_from_recipient" AND "hold" IS NOT NULL AND "hold_expires_at" IS NOT NULL))`,
    );
    await runner.query(`CREATE INDEX "tasks_hold_expires_idx" ON "tasks"."tasks" ("hold_expires_at") WHERE "state" = 'held'`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "tasks"."tasks_hold_expires_idx"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP CONSTRAINT "tasks_held_is_hidden"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP CONSTRAINT "tasks_hidden_only_when_held"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP CONSTRAINT "tasks_hold_object"`);
    await this.replaceChecks(runner, STATES, TRANSITIONS);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP COLUMN "hidden_from_recipient"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP COLUMN "hold_expires_at"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP COLUMN "hold"`);
  }

  private async replaceChecks(runner: QueryRunner, states: string, transitions: string): Promise<void> {
    for (const [table, name, check] of [
      ['tasks', 'tasks_state_known', `"state" IN (${states})`],
      ['audit_log', 'audit_log_transition_known', `"transition" IN (${transitions})`],
      ['audit_log', 'audit_log_from_state_known', `"from_state" IS NULL OR "from_state" IN (${states})`],
      ['audit_log', 'audit_log_to_state_known', `"to_state" IN (${states})`],
    ]) {
      await runner.query(`ALTER TABLE "tasks"."${table}" DROP CONSTRAINT "${name}"`);
      await runner.query(`ALTER TABLE "tasks"."${table}" ADD CONSTRAINT "${name}" CHECK (${check})`);
    }
  }
}
