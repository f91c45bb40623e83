export * from './dialect';
