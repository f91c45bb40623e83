import { randomBytes } from 'node:crypto';
import { DataSource, type QueryRunner } from 'typeorm';
import { createIndexConcurrently } from '@app/database';

/** The migrations' concurrent index builds, against Postgres: an index a failed build left invalid is built again, not kept. */
describe('createIndexConcurrently', () => {
  const schema = `concurrent_index_${randomBytes(4).toString('hex')}`;
  let dataSource: DataSource;
  let runner: QueryRunner;

  const validity = async (name: string): Promise<boolean[]> =>
    (
      (await runner.query(
        `SELECT i.indisvalid AS "valid" FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relname = $2`,
        [schema, name],
      )) as Array<{ valid: boolean }>
    ).map((row) => row.valid);

  beforeAll(async () => {
    const url = process.env.RELAY_MEDIUM_DATABASE_URL;
    if (!url) throw new Error('RELAY_MEDIUM_DATABASE_URL is not set: run the medium tests through jest (global setup creates it)');
    dataSource = new DataSource({ type: 'postgres', url });
    await dataSource.initialize();
    runner = dataSource.createQueryRunner();
    await runner.query(`CREATE SCHEMA "${schema}"`);
    await runner.query(`CREATE TABLE "${schema}"."items" ("value" int NOT NULL)`);
    await runner.query(`INSERT INTO "${schema}"."items" ("value") VALUES (1), (1), (2)`);
  });

  afterAll(async () => {
    await runner?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await runner?.release();
    await dataSource?.destroy();
  });

  it('builds the index, and builds again one a failed build left invalid', async () => {
    // A unique build over duplicate values fails and leaves its index behind, invalid.
    await expect(runner.query(`CREATE UNIQUE INDEX CONCURRENTLY "items_value_idx" ON "${schema}"."items" ("value")`)).rejects.toThrow(/duplicate|unique/i);
    expect(await validity('items_value_idx')).toEqual([false]);

    await createIndexConcurrently(runner, schema, 'items_value_idx', `"${schema}"."items" ("value")`);
    expect(await validity('items_value_idx')).toEqual([true]);
    const definitions = (await runner.query(`SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'items_value_idx'`, [schema])) as Array<{
      indexdef: string;
    }>;
    expect(definitions[0].indexdef).not.toMatch(/UNIQUE/);

    // Run again (a migration repeated after a failure further on): the valid index is kept as it is.
    await createIndexConcurrently(runner, schema, 'items_value_idx', `"${schema}"."items" ("value")`);
    expect(await validity('items_value_idx')).toEqual([true]);
  });
});
