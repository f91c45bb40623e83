export * from './secret-cipher';
export * from './secret-keys.validator';
export * from './reseal';
export * from './secrets.module';
