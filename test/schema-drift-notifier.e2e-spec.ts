import { DataSource } from 'typeorm';
import { migrateServiceSchema } from '@app/database';
import { notifierDataSourceOptions } from '../apps/notifier/src/database/data-source';
import { testDatabaseUrl } from './support/test-env';

describe('notifier entities and migrations agree', () => {
  let dataSource: DataSource;

  beforeAll(async () => {
    dataSource = await new DataSource(notifierDataSourceOptions(testDatabaseUrl())).initialize();
    await migrateServiceSchema(dataSource);
  });

  afterAll(async () => {
    await dataSource?.destroy();
  });

  it('TypeORM finds nothing to change in the migrated schema', async () => {
    const sql = await dataSource.driver.createSchemaBuilder().log();
    const pending = sql.upQueries.map((query) => query.query);
    if (pending.length > 0) throw new Error(`The entities differ from the migrated schema; TypeORM would run:\n${pending.join(';\n')}`);
    expect(pending).toEqual([]);
  });
});
