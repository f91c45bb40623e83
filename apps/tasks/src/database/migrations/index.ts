import { CreateTasks1764480000000 } from './1764480000000-CreateTasks';

/** Every migration of the tasks schema, oldest first. */
export const TASKS_MIGRATIONS: Array<new () => object> = [CreateTasks1764480000000];
