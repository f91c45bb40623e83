import type { MigrationInterface, QueryRunner } from 'typeorm';

const TASK_EVENT_TYPES = `'created', 'message_appended', 'artifact_updated', 'accepted', 'input_required', 'completed', 'failed', 'rejected', 'canceled'`;
const PREVIOUS_TASK_EVENT_TYPES = `'created', 'message_appended', 'accepted', 'input_required', 'completed', 'failed', 'rejected', 'canceled'`;

function typeChecks(types: string): string[] {
  return [
    `ADD CONSTRAINT "outbox_events_type_known" CHECK ("type" IN (${types}, 'push_config_set', 'push_config_deleted'))`,
    `ADD CONSTRAINT "outbox_events_subject_matches_type" CHECK (("type" IN (${types}) AND "subject" = 'relay.events.task.' || "type")
        OR ("type" = 'push_config_set' AND "subject" = 'relay.events.push_config.set')
        OR ("type" = 'push_config_deleted' AND "subject" = 'relay.events.push_config.deleted'))`,
  ];
}

/**
 * Streams replay a task's events from the outbox (docs/events.md#positions-and-stream-ids): the
 * `artifact_updated` event type, and an index to read one task's events after a position.
 */
export class TaskEventReplay1764540000000 implements MigrationInterface {
  name = 'TaskEventReplay1764540000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `ALTER TABLE "tasks"."outbox_events" DROP CONSTRAINT "outbox_events_type_known", DROP CONSTRAINT "outbox_events_subject_matches_type", ${typeChecks(TASK_EVENT_TYPES).join(', ')}`,
    );
    await runner.query(`CREATE INDEX "outbox_events_task_position_idx" ON "tasks"."outbox_events" ("task_id", "position")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "tasks"."outbox_events_task_position_idx"`);
    await runner.query(`DELETE FROM "tasks"."outbox_events" WHERE "type" = 'artifact_updated'`);
    await runner.query(
      `ALTER TABLE "tasks"."outbox_events" DROP CONSTRAINT "outbox_events_type_known", DROP CONSTRAINT "outbox_events_subject_matches_type", ${typeChecks(PREVIOUS_TASK_EVENT_TYPES).join(', ')}`,
    );
  }
}
