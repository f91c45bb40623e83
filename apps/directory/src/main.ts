import 'reflect-metadata';
import { loadConfig } from '@app/config';
import { startDirectoryService } from './bootstrap';
import { DirectoryConfig } from './directory.config';

startDirectoryService(loadConfig(DirectoryConfig, process.env)).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
