export * from './data-source.factory';
export * from './snake-naming.strategy';
export * from './create-database';
export * from './database-health';
export * from './typeorm-root';
export * from './database-metrics';
export * from './retention';
export * from './deployment';
