import 'reflect-metadata';
import { loadConfig } from '@app/config';
import { startTasksService } from './bootstrap';
import { TasksConfig } from './tasks.config';

startTasksService(loadConfig(TasksConfig, process.env)).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
