import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A change answers the earlier events of its task not published yet, to publish them before its
 * own right after its commit (docs/decisions/0036-publish-after-commit-outbox-as-safety-net.md):
 * found by the task, in position order, among the unpublished rows only.
 */
export class TaskUnpublishedEvents1765473600036 implements MigrationInterface {
  name = 'TaskUnpublishedEvents1765473600036';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX "outbox_events_task_unpublished_idx" ON "tasks"."outbox_events" ("task_id", "position") WHERE "published_at" IS NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "tasks"."outbox_events_task_unpublished_idx"`);
  }
}
