import 'reflect-metadata';
import { loadConfig } from '@app/config';
import { startEdge } from './bootstrap';
import { EdgeConfig } from './edge.config';

startEdge(loadConfig(EdgeConfig, process.env)).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
