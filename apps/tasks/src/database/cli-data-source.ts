import { DataSource } from 'typeorm';
import { DatabaseServiceConfig, loadConfig } from '@app/config';
import { tasksDataSourceOptions } from './data-source';

/** Entry point of the TypeORM CLI for the tasks schema (migration:generate, migration:show). */
export default new DataSource(tasksDataSourceOptions(loadConfig(DatabaseServiceConfig, process.env).DATABASE_URL));
