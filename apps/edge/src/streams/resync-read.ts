import pRetry from 'p-retry';
import { RelayError } from '@app/contracts';

/** Failures that say a service is not reachable yet (NATS or the service still reconnecting), not that the read is wrong. */
const TRANSIENT_REASONS = new Set(['service_unavailable', 'service_timeout']);

export function isTransientReadFailure(error: unknown): boolean {
  return error instanceof RelayError && TRANSIENT_REASONS.has(error.reason);
}

/**
 * A stream's read of what was published while its feed was down. The feed reconnects as soon as
 * NATS is back, often before the tasks service has: the read is tried again, from 250 ms doubling
 * to 2 s, while it fails for that reason, until the stream's `deadline` (epoch ms) or its client
 * goes away; any other failure ends the stream as before.
 */
export function readAfterResync<T>(read: () => Promise<T>, deadline: number, signal: AbortSignal): Promise<T> {
  return pRetry(read, {
    retries: Infinity,
    minTimeout: 250,
    factor: 2,
    maxTimeout: 2000,
    maxRetryTime: Math.max(0, deadline - Date.now()),
    signal,
    shouldRetry: ({ error }) => isTransientReadFailure(error),
  });
}
