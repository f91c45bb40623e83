import type { MigrationInterface, QueryRunner } from 'typeorm';

const STATES = `'pending', 'accepted', 'input_required', 'completed', 'cancelled', 'failed', 'rejected'`;

/**
 * Handoff threads, their messages, artifacts, idempotency keys, read cursors and transition audit
 * log, and the transactional outbox of task events, with the invariants as constraints.
 */
export class CreateTasks1764480000000 implements MigrationInterface {
  name = 'CreateTasks1764480000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "tasks"."threads" (
        "id" char(26) NOT NULL,
        "context_id" varchar(255) NOT NULL,
        "sender_id" varchar(64) NOT NULL,
        "sender_handle" varchar(255) NOT NULL,
        "sender_name" varchar(200) NOT NULL,
        "sender_role" varchar(100),
        "recipient_id" varchar(64) NOT NULL,
        "recipient_handle" varchar(255) NOT NULL,
        "recipient_name" varchar(200) NOT NULL,
        "recipient_role" varchar(100),
        "state" varchar(20) NOT NULL DEFAULT 'pending',
        "intent" varchar(20) NOT NULL DEFAULT 'inform',
        "summary" text NOT NULL,
        "proposed_action" jsonb,
        "metadata" jsonb NOT NULL DEFAULT '{}',
        "result_summary" text,
        "reason" text,
        "message_count" integer NOT NULL DEFAULT 0,
        "version" integer NOT NULL DEFAULT 1,
        "accepted_at" timestamptz,
        "completed_at" timestamptz,
        "cancelled_at" timestamptz,
        "failed_at" timestamptz,
        "rejected_at" timestamptz,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        "status_timestamp" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "threads_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "threads_id_ulid" CHECK ("id" ~ '^[0-9A-HJKMNP-TV-Z]{26}$'),
        CONSTRAINT "threads_state_known" CHECK ("state" IN (${STATES})),
        CONSTRAINT "threads_intent_known" CHECK ("intent" IN ('inform', 'ask_question', 'propose_action')),
        CONSTRAINT "threads_proposed_action_matches_intent" CHECK (("intent" = 'propose_action') = ("proposed_action" IS NOT NULL AND jsonb_typeof("proposed_action") = 'object')),
        CONSTRAINT "threads_metadata_object" CHECK (jsonb_typeof("metadata") = 'object'),
        CONSTRAINT "threads_message_count_range" CHECK ("message_count" BETWEEN 0 AND 500),
        CONSTRAINT "threads_version_positive" CHECK ("version" >= 1),
        CONSTRAINT "threads_accepted_at_when_accepted" CHECK ("state" NOT IN ('accepted', 'input_required', 'completed', 'failed') OR "accepted_at" IS NOT NULL),
        CONSTRAINT "threads_completed_at_when_completed" CHECK (("state" = 'completed') = ("completed_at" IS NOT NULL)),
        CONSTRAINT "threads_cancelled_at_when_cancelled" CHECK (("state" = 'cancelled') = ("cancelled_at" IS NOT NULL)),
        CONSTRAINT "threads_failed_at_when_failed" CHECK (("state" = 'failed') = ("failed_at" IS NOT NULL)),
        CONSTRAINT "threads_rejected_at_when_rejected" CHECK (("state" = 'rejected') = ("rejected_at" IS NOT NULL))
      )`);
    await runner.query(`CREATE INDEX "threads_recipient_created_idx" ON "tasks"."threads" ("recipient_id", "id" DESC)`);
    await runner.query(`CREATE INDEX "threads_sender_created_idx" ON "tasks"."threads" ("sender_id", "id" DESC)`);
    await runner.query(`CREATE INDEX "threads_recipient_status_idx" ON "tasks"."threads" ("recipient_id", "status_timestamp" DESC, "id" DESC)`);
    await runner.query(`CREATE INDEX "threads_sender_status_idx" ON "tasks"."threads" ("sender_id", "status_timestamp" DESC, "id" DESC)`);
    await runner.query(`CREATE INDEX "threads_context_idx" ON "tasks"."threads" ("context_id")`);

    await runner.query(`
      CREATE TABLE "tasks"."messages" (
        "thread_id" char(26) NOT NULL,
        "sequence_no" integer NOT NULL,
        "id" varchar(255) NOT NULL,
        "author" varchar(10) NOT NULL,
        "author_id" varchar(64) NOT NULL,
        "from_handle" varchar(255) NOT NULL,
        "body" text NOT NULL,
        "parts" jsonb NOT NULL,
        "payload" jsonb NOT NULL DEFAULT '{}',
        "created_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "messages_pkey" PRIMARY KEY ("thread_id", "sequence_no"),
        CONSTRAINT "messages_thread_id_id_key" UNIQUE ("thread_id", "id"),
        CONSTRAINT "messages_thread_fkey" FOREIGN KEY ("thread_id") REFERENCES "tasks"."threads" ("id") ON DELETE CASCADE,
        CONSTRAINT "messages_sequence_range" CHECK ("sequence_no" BETWEEN 1 AND 500),
        CONSTRAINT "messages_id_length" CHECK (char_length("id") BETWEEN 1 AND 255),
        CONSTRAINT "messages_author_known" CHECK ("author" IN ('sender', 'recipient')),
        CONSTRAINT "messages_parts_array" CHECK (jsonb_typeof("parts") = 'array' AND jsonb_array_length("parts") >= 1),
        CONSTRAINT "messages_payload_object" CHECK (jsonb_typeof("payload") = 'object')
      )`);

    await runner.query(`
      CREATE TABLE "tasks"."artifacts" (
        "thread_id" char(26) NOT NULL,
        "artifact_id" varchar(255) NOT NULL,
        "position" integer NOT NULL,
        "type" varchar(20),
        "fields" jsonb NOT NULL DEFAULT '{}',
        "name" varchar(1024),
        "description" text,
        "parts" jsonb NOT NULL DEFAULT '[]',
        "metadata" jsonb NOT NULL DEFAULT '{}',
        "last_chunk" boolean NOT NULL DEFAULT true,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "artifacts_pkey" PRIMARY KEY ("thread_id", "artifact_id"),
        CONSTRAINT "artifacts_thread_position_key" UNIQUE ("thread_id", "position"),
        CONSTRAINT "artifacts_thread_fkey" FOREIGN KEY ("thread_id") REFERENCES "tasks"."threads" ("id") ON DELETE CASCADE,
        CONSTRAINT "artifacts_type_known" CHECK ("type" IS NULL OR "type" IN ('file_diff', 'file_ref', 'test_command', 'api_contract', 'link')),
        CONSTRAINT "artifacts_typed_or_parts" CHECK ("type" IS NOT NULL OR jsonb_array_length("parts") >= 1),
        CONSTRAINT "artifacts_fields_object" CHECK (jsonb_typeof("fields") = 'object'),
        CONSTRAINT "artifacts_parts_array" CHECK (jsonb_typeof("parts") = 'array'),
        CONSTRAINT "artifacts_metadata_object" CHECK (jsonb_typeof("metadata") = 'object')
      )`);

    await runner.query(`
      CREATE TABLE "tasks"."idempotency_keys" (
        "sender_id" varchar(64) NOT NULL,
        "scope" varchar(20) NOT NULL,
        "key" varchar(255) NOT NULL,
        "request_hash" char(64) NOT NULL,
        "thread_id" char(26) NOT NULL,
        "sequence_no" integer NOT NULL,
        "created_thread" boolean NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("sender_id", "scope", "key"),
        CONSTRAINT "idempotency_keys_message_fkey" FOREIGN KEY ("thread_id", "sequence_no") REFERENCES "tasks"."messages" ("thread_id", "sequence_no") ON DELETE CASCADE,
        CONSTRAINT "idempotency_keys_scope_known" CHECK ("scope" IN ('message_id', 'client_key')),
        CONSTRAINT "idempotency_keys_key_length" CHECK (char_length("key") BETWEEN 1 AND 255)
      )`);

    await runner.query(`
      CREATE TABLE "tasks"."read_cursors" (
        "thread_id" char(26) NOT NULL,
        "participant_id" varchar(64) NOT NULL,
        "last_read_sequence_no" integer NOT NULL DEFAULT 0,
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "read_cursors_pkey" PRIMARY KEY ("thread_id", "participant_id"),
        CONSTRAINT "read_cursors_thread_fkey" FOREIGN KEY ("thread_id") REFERENCES "tasks"."threads" ("id") ON DELETE CASCADE,
        CONSTRAINT "read_cursors_sequence_range" CHECK ("last_read_sequence_no" BETWEEN 0 AND 500)
      )`);

    await runner.query(`
      CREATE TABLE "tasks"."audit_log" (
        "id" bigserial NOT NULL,
        "thread_id" char(26) NOT NULL,
        "actor_id" varchar(64) NOT NULL,
        "transition" varchar(20) NOT NULL,
        "from_state" varchar(20),
        "to_state" varchar(20) NOT NULL,
        "session_id" varchar(255),
        "reason" text,
        "at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "audit_log_thread_fkey" FOREIGN KEY ("thread_id") REFERENCES "tasks"."threads" ("id") ON DELETE CASCADE,
        CONSTRAINT "audit_log_transition_known" CHECK ("transition" IN ('create', 'accept', 'complete', 'cancel', 'decline', 'fail', 'request_input', 'resume')),
        CONSTRAINT "audit_log_from_state_known" CHECK ("from_state" IS NULL OR "from_state" IN (${STATES})),
        CONSTRAINT "audit_log_to_state_known" CHECK ("to_state" IN (${STATES})),
        CONSTRAINT "audit_log_create_has_no_from" CHECK (("transition" = 'create') = ("from_state" IS NULL))
      )`);
    await runner.query(`CREATE INDEX "audit_log_thread_idx" ON "tasks"."audit_log" ("thread_id", "id")`);

    await runner.query(`
      CREATE TABLE "tasks"."outbox_events" (
        "id" uuid PRIMARY KEY,
        "position" bigserial UNIQUE,
        "subject" text NOT NULL,
        "type" text NOT NULL,
        "task_id" text NOT NULL,
        "payload" jsonb NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "published_at" timestamptz NULL,
        "attempts" int NOT NULL DEFAULT 0,
        "last_error" text NULL,
        CONSTRAINT "outbox_events_type_known" CHECK ("type" IN ('created', 'message_appended', 'accepted', 'input_required', 'completed', 'failed', 'rejected', 'canceled')),
        CONSTRAINT "outbox_events_subject_matches_type" CHECK ("subject" = 'relay.events.task.' || "type")
      )`);
    await runner.query(`CREATE INDEX "outbox_events_unpublished_idx" ON "tasks"."outbox_events" ("position") WHERE "published_at" IS NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "tasks"."outbox_events"`);
    await runner.query(`DROP TABLE "tasks"."audit_log"`);
    await runner.query(`DROP TABLE "tasks"."read_cursors"`);
    await runner.query(`DROP TABLE "tasks"."idempotency_keys"`);
    await runner.query(`DROP TABLE "tasks"."artifacts"`);
    await runner.query(`DROP TABLE "tasks"."messages"`);
    await runner.query(`DROP TABLE "tasks"."threads"`);
  }
}
