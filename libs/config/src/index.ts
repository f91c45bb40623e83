export * from './load-config';
export * from './common.config';
export * from './nats-servers';
