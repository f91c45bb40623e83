import { DataSource, type DataSourceOptions } from 'typeorm';
import { migrateServiceSchema } from '@app/database';
import { directoryDataSourceOptions } from '../apps/directory/src/database/data-source';
import { testDatabaseUrl } from './support/test-env';

/** The SQL TypeORM would run to make the migrated schema match the entities (none, when they agree). */
async function pendingSchemaChanges(options: DataSourceOptions): Promise<string[]> {
  const dataSource = await new DataSource(options).initialize();
  try {
    await migrateServiceSchema(dataSource);
    const sql = await dataSource.driver.createSchemaBuilder().log();
    return sql.upQueries.map((query) => query.query);
  } finally {
    await dataSource.destroy();
  }
}

describe('entities and migrations agree', () => {
  it('directory', async () => {
    expect(await pendingSchemaChanges(directoryDataSourceOptions(testDatabaseUrl()))).toEqual([]);
  });
});
