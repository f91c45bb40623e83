/** Every migration of the tasks schema, oldest first. */
export const TASKS_MIGRATIONS: Array<new () => object> = [];
