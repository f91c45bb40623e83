import type { MigrationInterface, QueryRunner } from 'typeorm';

const TASK_EVENTS_ONLY = `"type" NOT IN ('push_config_set', 'push_config_deleted')`;

/** A live inbox starts at its agent's newest event: the newest outbox position per sender and per recipient. */
export class InboxPositions1764570000000 implements MigrationInterface {
  name = 'InboxPositions1764570000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `CREATE INDEX "outbox_events_sender_position_idx" ON "tasks"."outbox_events" (("payload"->>'sender'), "position") WHERE ${TASK_EVENTS_ONLY}`,
    );
    await runner.query(
      `CREATE INDEX "outbox_events_recipient_position_idx" ON "tasks"."outbox_events" (("payload"->>'recipient'), "position") WHERE ${TASK_EVENTS_ONLY}`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "tasks"."outbox_events_recipient_position_idx"`);
    await runner.query(`DROP INDEX "tasks"."outbox_events_sender_position_idx"`);
  }
}
