import { DataSource } from 'typeorm';
import { loadConfig } from '@app/config';
import { DirectoryConfig } from '../directory.config';
import { directoryDataSourceOptions } from './data-source';

/** Entry point of the TypeORM CLI for the directory schema (migration:generate, migration:show). */
export default new DataSource(directoryDataSourceOptions(loadConfig(DirectoryConfig, process.env).DATABASE_URL));
