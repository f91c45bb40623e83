export * from './errors';
export * from './subjects';
export * from './rpc-map';
export * from './health/health.contract';
export * from './tasks/thread.model';
export * from './directory/agent.model';
export * from './events/task-event.model';
