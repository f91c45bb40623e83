export * from './params';
export * from './render';
export * from './search';
