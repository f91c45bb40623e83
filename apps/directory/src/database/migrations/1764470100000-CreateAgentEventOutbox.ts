import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Agent events written in the same transaction as the change, relayed to JetStream afterwards. */
export class CreateAgentEventOutbox1764470100000 implements MigrationInterface {
  name = 'CreateAgentEventOutbox1764470100000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "directory"."outbox_events" (
        "id" uuid NOT NULL,
        "position" bigserial NOT NULL,
        "subject" varchar(255) NOT NULL,
        "payload" jsonb NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "published_at" timestamptz,
        CONSTRAINT "outbox_events_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "outbox_events_position_key" UNIQUE ("position"),
        CONSTRAINT "outbox_events_subject_format" CHECK ("subject" ~ '^relay\\.events\\.[a-z_]+\\.[a-z_]+$'),
        CONSTRAINT "outbox_events_payload_object" CHECK (jsonb_typeof("payload") = 'object')
      )`);
    await runner.query(`CREATE INDEX "outbox_events_unpublished_idx" ON "directory"."outbox_events" ("position") WHERE "published_at" IS NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "directory"."outbox_events"`);
  }
}
