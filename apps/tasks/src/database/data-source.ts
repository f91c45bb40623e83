import type { DataSourceOptions } from 'typeorm';
import { serviceDataSourceOptions } from '@app/database';
import { TASKS_ENTITIES } from './entities';
import { TASKS_MIGRATIONS } from './migrations';

export const TASKS_SCHEMA = 'tasks';

/** The one data source definition of the tasks service, shared by the app, the CLI and the tests. */
export function tasksDataSourceOptions(databaseUrl: string, statementTimeoutMs?: number): DataSourceOptions {
  return serviceDataSourceOptions({ schema: TASKS_SCHEMA, url: databaseUrl, entities: TASKS_ENTITIES, migrations: TASKS_MIGRATIONS, statementTimeoutMs });
}
