import { DataSource, type DataSourceOptions } from 'typeorm';
import { migrateServiceSchema } from '@app/database';
import { directoryDataSourceOptions } from '../apps/directory/src/database/data-source';
import { notifierDataSourceOptions } from '../apps/notifier/src/database/data-source';
import { tasksDataSourceOptions } from '../apps/tasks/src/database/data-source';
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

describe('entities and migrations agree (what migration:generate would write is nothing)', () => {
  it.each([
    ['directory', directoryDataSourceOptions],
    ['tasks', tasksDataSourceOptions],
    ['notifier', notifierDataSourceOptions],
  ])('%s', async (_schema, optionsFor) => {
    const pending = await pendingSchemaChanges(optionsFor(testDatabaseUrl()));
    if (pending.length > 0) throw new Error(`The entities differ from the migrated schema; TypeORM would run:\n${pending.join(';\n')}`);
    expect(pending).toEqual([]);
  });
});
