export * from './service-tracers';
export * from './tracing';
export * from './propagation';
export * from './spans';
export * from './postgres';
export * from './handoff-trace';
