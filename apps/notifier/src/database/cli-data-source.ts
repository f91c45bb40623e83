import { DataSource } from 'typeorm';
import { DatabaseServiceConfig, loadConfig } from '@app/config';
import { notifierDataSourceOptions } from './data-source';

/** Entry point of the TypeORM CLI for the notifier schema (migration:generate, migration:show). */
export default new DataSource(notifierDataSourceOptions(loadConfig(DatabaseServiceConfig, process.env).DATABASE_URL));
