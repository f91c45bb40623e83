import { DataSource } from 'typeorm';
import { loadConfig } from '@app/config';
import { NotifierConfig } from '../notifier.config';
import { notifierDataSourceOptions } from './data-source';

/** Entry point of the TypeORM CLI for the notifier schema (migration:generate, migration:show). */
export default new DataSource(notifierDataSourceOptions(loadConfig(NotifierConfig, process.env).DATABASE_URL));
