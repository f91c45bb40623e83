export * from './secret-cipher';
export * from './notifier-sealing';
export * from './delivery-assertion-keys';
export * from './webhook-secret';
export * from './secret-keys.validator';
export * from './reseal';
export * from './random-ids';
export * from './secrets.module';
