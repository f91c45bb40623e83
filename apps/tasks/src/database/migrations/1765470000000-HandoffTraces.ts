import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The trace of a handoff (docs/chains.md): its chain's W3C trace id, which every delivery's
 * `traceparent` names and by which a call carrying it back is linked to the handoff, and the span
 * its deliveries continue. Tasks stored before have none: their deliveries start a trace of their own.
 */
export class HandoffTraces1765470000000 implements MigrationInterface {
  name = 'HandoffTraces1765470000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD "trace_id" char(32)`);
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD "trace_span_id" char(16)`);
    await runner.query(
      `ALTER TABLE "tasks"."tasks" ADD CONSTRAINT "tasks_trace_format" CHECK (("trace_id" IS NULL OR "trace_id" ~ '^[0-9a-f]{32}$') AND ("trace_span_id" IS NULL OR "trace_span_id" ~ '^[0-9a-f]{16}$'))`,
    );
    await runner.query(`CREATE INDEX "tasks_trace_idx" ON "tasks"."tasks" ("trace_id")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "tasks"."tasks_trace_idx"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP CONSTRAINT "tasks_trace_format"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP COLUMN "trace_span_id"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP COLUMN "trace_id"`);
  }
}
