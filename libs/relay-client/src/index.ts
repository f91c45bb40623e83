export * from './relay-types';
export * from './relay-client-error';
export * from './relay-client';
export * from './display-text';
export * from './task-text';
export * from './live-inbox';
export * from './transient-retry';
