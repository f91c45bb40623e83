import { CreateDirectory1764470000000 } from './1764470000000-CreateDirectory';
import { CreateAgentEventOutbox1764470100000 } from './1764470100000-CreateAgentEventOutbox';
import { AdminAudit1764560000000 } from './1764560000000-AdminAudit';

/** Every migration of the directory schema, oldest first. */
export const DIRECTORY_MIGRATIONS: Array<new () => object> = [CreateDirectory1764470000000, CreateAgentEventOutbox1764470100000, AdminAudit1764560000000];
