/**
 * NATS header with the instant (epoch milliseconds) after which the caller no longer waits for the
 * reply. A service does not start a request past it, so a request the caller gave up on is never
 * carried out later; one started in time may still finish after it (a retried send is then
 * answered from its idempotency key).
 */
export const DEADLINE_HEADER = 'relay-deadline';

/** The deadline a request carries, or undefined when it carries none (or an unreadable one). */
export function deadlineOf(headers: { get(name: string): string } | undefined): number | undefined {
  const value = Number(headers?.get(DEADLINE_HEADER) || Number.NaN);
  return Number.isFinite(value) ? value : undefined;
}
