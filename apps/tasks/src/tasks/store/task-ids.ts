import { monotonicFactory } from 'ulid';
import { randomIdFraction } from '@app/secrets/random-ids';

/** The id of a new task: a ULID, increasing within this process even inside one millisecond (both create paths take it from here). */
export const nextTaskId = monotonicFactory(randomIdFraction);
