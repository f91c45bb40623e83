export * from './load-config';
export * from './common.config';
export * from './nats-servers';
export * from './nats-credentials';
