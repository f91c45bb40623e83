import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The text search reads a message's text parts; the index and the queries use this one expression. */
export const MESSAGE_SEARCH_VECTOR = `to_tsvector('english'::regconfig, jsonb_path_query_array("parts", '$[*] ? (@.kind == "text").text'))`;
/** An artifact's name, or a typed artifact's path, with path separators as spaces (so that `db/users-schema.sql` is found by `users`). */
export const ARTIFACT_SEARCH_TEXT = `translate(COALESCE("name", "fields"->>'path', ''), '/\\._-', '     ')`;
export const ARTIFACT_SEARCH_VECTOR = `to_tsvector('english'::regconfig, ${ARTIFACT_SEARCH_TEXT})`;

/**
 * The operator console's reads: tasks across all agents newest first (by creation time, overall,
 * per state and per participant), tasks completed lately, and full-text search over message text
 * and artifact names.
 */
export class ConsoleReads1764560000000 implements MigrationInterface {
  name = 'ConsoleReads1764560000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX "tasks_created_at_idx" ON "tasks"."tasks" ("created_at" DESC, "id" DESC)`);
    await runner.query(`CREATE INDEX "tasks_state_created_at_idx" ON "tasks"."tasks" ("state", "created_at" DESC, "id" DESC)`);
    await runner.query(`CREATE INDEX "tasks_sender_created_at_idx" ON "tasks"."tasks" ("sender_id", "created_at" DESC, "id" DESC)`);
    await runner.query(`CREATE INDEX "tasks_recipient_created_at_idx" ON "tasks"."tasks" ("recipient_id", "created_at" DESC, "id" DESC)`);
    await runner.query(`CREATE INDEX "tasks_completed_at_idx" ON "tasks"."tasks" ("completed_at") WHERE "completed_at" IS NOT NULL`);
    await runner.query(`CREATE INDEX "messages_search_idx" ON "tasks"."messages" USING GIN (${MESSAGE_SEARCH_VECTOR})`);
    await runner.query(`CREATE INDEX "artifacts_name_search_idx" ON "tasks"."artifacts" USING GIN (${ARTIFACT_SEARCH_VECTOR})`);
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const index of [
      'artifacts_name_search_idx',
      'messages_search_idx',
      'tasks_completed_at_idx',
      'tasks_recipient_created_at_idx',
      'tasks_sender_created_at_idx',
      'tasks_state_created_at_idx',
      'tasks_created_at_idx',
    ]) {
      await runner.query(`DROP INDEX "tasks"."${index}"`);
    }
  }
}
