import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An outbox event remembers the `traceparent` of the request that wrote it (null when that
 * request was not traced), so that its publication and deliveries link back to that trace.
 */
export class OutboxTraceParent1764530000000 implements MigrationInterface {
  name = 'OutboxTraceParent1764530000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "tasks"."outbox_events" ADD COLUMN "trace_parent" text`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "tasks"."outbox_events" DROP COLUMN "trace_parent"`);
  }
}
