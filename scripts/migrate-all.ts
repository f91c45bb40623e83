import { DataSource } from 'typeorm';
import { migrateServiceSchema } from '@app/database';
import { directoryDataSourceOptions } from '../apps/directory/src/database/data-source';
import { notifierDataSourceOptions } from '../apps/notifier/src/database/data-source';
import { tasksDataSourceOptions } from '../apps/tasks/src/database/data-source';

/** Applies the migrations of every service's schema to the database at `databaseUrl`. */
export async function migrateAllSchemas(databaseUrl: string): Promise<Record<string, string[]>> {
  const applied: Record<string, string[]> = {};
  for (const [schema, options] of [
    ['directory', directoryDataSourceOptions(databaseUrl)],
    ['tasks', tasksDataSourceOptions(databaseUrl)],
    ['notifier', notifierDataSourceOptions(databaseUrl)],
  ] as const) {
    const dataSource = await new DataSource(options).initialize();
    try {
      applied[schema] = await migrateServiceSchema(dataSource);
    } finally {
      await dataSource.destroy();
    }
  }
  return applied;
}
