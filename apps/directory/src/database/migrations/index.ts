import { CreateDirectory1764470000000 } from './1764470000000-CreateDirectory';

/** Every migration of the directory schema, oldest first. */
export const DIRECTORY_MIGRATIONS: Array<new () => object> = [CreateDirectory1764470000000];
