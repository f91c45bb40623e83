export * from './params';
export * from './render';
