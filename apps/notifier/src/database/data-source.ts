import type { DataSourceOptions } from 'typeorm';
import { serviceDataSourceOptions } from '@app/database';
import { NOTIFIER_ENTITIES } from './entities';
import { NOTIFIER_MIGRATIONS } from './migrations';

export const NOTIFIER_SCHEMA = 'notifier';

/** The one data source definition of the notifier service, shared by the app, the CLI and the tests. */
export function notifierDataSourceOptions(databaseUrl: string, statementTimeoutMs?: number): DataSourceOptions {
  return serviceDataSourceOptions({
    schema: NOTIFIER_SCHEMA,
    url: databaseUrl,
    entities: NOTIFIER_ENTITIES,
    migrations: NOTIFIER_MIGRATIONS,
    statementTimeoutMs,
  });
}
