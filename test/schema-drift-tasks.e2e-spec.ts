import { DataSource } from 'typeorm';
import { migrateServiceSchema } from '@app/database';
import { tasksDataSourceOptions } from '../apps/tasks/src/database/data-source';
import { testDatabaseUrl } from './support/test-env';

describe('tasks entities and migrations agree', () => {
  let dataSource: DataSource;

  beforeAll(async () => {
    dataSource = await new DataSource(tasksDataSourceOptions(testDatabaseUrl())).initialize();
    await migrateServiceSchema(dataSource);
  });

  afterAll(async () => {
    await dataSource?.destroy();
  });

  it('TypeORM finds no difference between the entities and the migrated schema', async () => {
    const sql = await dataSource.driver.createSchemaBuilder().log();
    const pending = sql.upQueries.map((query) => query.query);
    if (pending.length > 0) {
      throw new Error(`The entities differ from the migrated schema; TypeORM would run:\n${pending.join(';\n')}`);
    }
    expect(pending).toEqual([]);
  });
});
