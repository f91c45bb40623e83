export * from './relay-nats.server';
export * from './nats-rpc.client';
export * from './rpc-exception.filter';
export * from './rpc-validation.pipe';
export * from './request-id.interceptor';
export * from './bootstrap-microservice';
export * from './jetstream';
export * from './wakeable-delay';
