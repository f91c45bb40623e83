export * from './secret-cipher';
export * from './secret-keys.validator';
