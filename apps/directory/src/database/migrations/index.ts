/** Every migration of the directory schema, oldest first. */
export const DIRECTORY_MIGRATIONS: Array<new () => object> = [];
