import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from '@app/database';
import { MESSAGE_SEARCH_VECTOR as WHOLE_MESSAGE_SEARCH_VECTOR } from './1764560000000-ConsoleReads';

/**
 * Characters of a message's text (its text parts, joined by newlines) the search index reads. A
 * tsvector holds at most 1 MB, which about 700 KB of distinct short words reach; 100,000 characters
 * make at most about 500 KB however the text is written (some 4 bytes a character for words of one
 * or two multi-byte letters), and bound what a search parses again to rank or highlight a message.
 */
export const MESSAGE_SEARCH_CHARS = 100_000;

/** A message's searchable text: its text parts in order, joined by newlines, cut to MESSAGE_SEARCH_CHARS. */
export const MESSAGE_SEARCH_TEXT = `"tasks"."message_search_text"("parts")`;
/** The text search reads the first MESSAGE_SEARCH_CHARS characters of a message's text parts; the index and the queries use this one expression. */
export const MESSAGE_SEARCH_VECTOR = `to_tsvector('english'::regconfig, ${MESSAGE_SEARCH_TEXT})`;

/**
 * The message search index over a bounded prefix of the text (docs/admin-api.md#search), so that
 * any message within the limits can be stored (the whole-text index refused one of too many
 * distinct words: `string is too long for tsvector`). The function is IMMUTABLE, as an index
 * expression must be; the planner matches the queries' expression to the index through it. The
 * index is built CONCURRENTLY, so a big table takes writes meanwhile; every statement stands
 * alone and can run again after a failure (see Retention).
 */
export class BoundedSearch1764590000000 implements MigrationInterface {
  name = 'BoundedSearch1764590000000';
  transaction = false;

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `CREATE OR REPLACE FUNCTION "tasks"."message_search_text"("parts" jsonb) RETURNS text
       LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
       AS $$ SELECT left(string_agg(p."value"->>'text', E'\\n' ORDER BY p."ordinality"), ${MESSAGE_SEARCH_CHARS})
             FROM jsonb_array_elements("parts") WITH ORDINALITY p WHERE p."value"->>'kind' = 'text' $$`,
    );
    await createIndexConcurrently(runner, 'tasks', 'messages_text_search_idx', `"tasks"."messages" USING GIN (${MESSAGE_SEARCH_VECTOR})`);
    await runner.query(`DROP INDEX CONCURRENTLY IF EXISTS "tasks"."messages_search_idx"`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS "messages_search_idx" ON "tasks"."messages" USING GIN (${WHOLE_MESSAGE_SEARCH_VECTOR})`);
    await runner.query(`DROP INDEX CONCURRENTLY IF EXISTS "tasks"."messages_text_search_idx"`);
    await runner.query(`DROP FUNCTION IF EXISTS "tasks"."message_search_text"(jsonb)`);
  }
}
