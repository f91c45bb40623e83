export * from './logger';
export * from './request-context';
export type { Logger } from 'pino';
