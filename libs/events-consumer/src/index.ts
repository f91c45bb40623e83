export * from './relay-event-consumer';
export * from './relay-event';
export * from './ordered-lanes';
export * from './recent-ids';
export * from './admin-snapshot';
