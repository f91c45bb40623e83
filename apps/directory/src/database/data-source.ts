import type { DataSourceOptions } from 'typeorm';
import { serviceDataSourceOptions } from '@app/database';
import { DIRECTORY_ENTITIES } from './entities';
import { DIRECTORY_MIGRATIONS } from './migrations';

export const DIRECTORY_SCHEMA = 'directory';

/** The one data source definition of the directory service, shared by the app, the CLI and the tests. */
export function directoryDataSourceOptions(databaseUrl: string, statementTimeoutMs?: number): DataSourceOptions {
  return serviceDataSourceOptions({
    schema: DIRECTORY_SCHEMA,
    url: databaseUrl,
    entities: DIRECTORY_ENTITIES,
    migrations: DIRECTORY_MIGRATIONS,
    statementTimeoutMs,
  });
}
