import 'reflect-metadata';
import { loadConfig } from '@app/config';
import { startNotifierService } from './bootstrap';
import { NotifierConfig } from './notifier.config';

startNotifierService(loadConfig(NotifierConfig, process.env)).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
