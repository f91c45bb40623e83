/** Every migration of the notifier schema, oldest first. */
export const NOTIFIER_MIGRATIONS: Array<new () => object> = [];
