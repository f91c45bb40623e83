export * from './dialect';
export * from './protojson';
export * from './mapping';
export * from './parse';
export * from './render';
export * from './params';
export * from './push-config';
export * from './rest-params';
