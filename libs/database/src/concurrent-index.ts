import type { QueryRunner } from 'typeorm';

/**
 * Builds index `name` of schema `schema` (`on`: its table and definition, as after `ON`) without
 * blocking writes to the table, in a migration that runs outside a transaction
 * (`transaction = false`), as CONCURRENTLY must. An index a failed build left invalid would be
 * kept by IF NOT EXISTS, so it is dropped first; run again after a failure, it builds the index.
 */
export async function createIndexConcurrently(runner: QueryRunner, schema: string, name: string, on: string): Promise<void> {
  await runner.query(
    `DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = '${schema}' AND c.relname = '${name}' AND NOT i.indisvalid) THEN EXECUTE 'DROP INDEX "${schema}"."${name}"'; END IF; END $$`,
  );
  await runner.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS "${name}" ON ${on}`);
}
