export * from './relay-types';
export * from './relay-client-error';
export * from './relay-client';
export * from './thread-text';
export * from './live-inbox';
