import type { MigrationInterface, QueryRunner } from 'typeorm';

const TASK_EVENT_TYPES = `'held', 'created', 'message_appended', 'artifact_updated', 'accepted', 'input_required', 'completed', 'failed', 'rejected', 'canceled'`;
const PREVIOUS_TASK_EVENT_TYPES = `'created', 'message_appended', 'artifact_updated', 'accepted', 'input_required', 'completed', 'failed', 'rejected', 'canceled'`;

function typeChecks(types: string): string[] {
  return [
    `ADD CONSTRAINT "outbox_events_type_known" CHECK ("type" IN (${types}, 'push_config_set', 'push_config_deleted'))`,
    `ADD CONSTRAINT "outbox_events_subject_matches_type" CHECK (("type" IN (${types}) AND "subject" = 'relay.events.task.' || "type")
        OR ("type" = 'push_config_set' AND "subject" = 'relay.events.push_config.set')
        OR ("type" = 'push_config_deleted' AND "subject" = 'relay.events.push_config.deleted'))`,
  ];
}

/** A task created held for approval writes the `held` event (its sender and the approvers are told; docs/decisions/0024-held-handoffs.md). */
export class HeldTaskEvent1765410000000 implements MigrationInterface {
  name = 'HeldTaskEvent1765410000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `ALTER TABLE "tasks"."outbox_events" DROP CONSTRAINT "outbox_events_type_known", DROP CONSTRAINT "outbox_events_subject_matches_type", ${typeChecks(TASK_EVENT_TYPES).join(', ')}`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DELETE FROM "tasks"."outbox_events" WHERE "type" = 'held'`);
    await runner.query(
      `ALTER TABLE "tasks"."outbox_events" DROP CONSTRAINT "outbox_events_type_known", DROP CONSTRAINT "outbox_events_subject_matches_type", ${typeChecks(PREVIOUS_TASK_EVENT_TYPES).join(', ')}`,
    );
  }
}
