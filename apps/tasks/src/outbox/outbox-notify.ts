import type { EntityManager } from 'typeorm';
import { OUTBOX_NOTIFY_CHANNEL } from './outbox.constants';

/**
 * Call inside the transaction that wrote outbox rows: Postgres delivers the notification at
 * commit, and the relay publishes at once instead of at its next poll.
 */
export async function notifyOutboxRelay(manager: EntityManager): Promise<void> {
  await manager.query('SELECT pg_notify($1, $2)', [OUTBOX_NOTIFY_CHANNEL, '']);
}
