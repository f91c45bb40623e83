import { DataSource } from 'typeorm';
import { loadConfig } from '@app/config';
import { TasksConfig } from '../tasks.config';
import { tasksDataSourceOptions } from './data-source';

/** Entry point of the TypeORM CLI for the tasks schema (migration:generate, migration:show). */
export default new DataSource(tasksDataSourceOptions(loadConfig(TasksConfig, process.env).DATABASE_URL));
