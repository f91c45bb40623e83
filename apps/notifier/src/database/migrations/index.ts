import { CreateNotifier1764480000000 } from './1764480000000-CreateNotifier';

/** Every migration of the notifier schema, oldest first. */
export const NOTIFIER_MIGRATIONS: Array<new () => object> = [CreateNotifier1764480000000];
