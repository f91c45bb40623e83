export * from './series';
export * from './registry';
export * from './http.metrics';
export * from './nats.metrics';
export * from './service.metrics';
export * from './metrics-server';
export * from './metrics.module';
export * from './service-metrics.module';
