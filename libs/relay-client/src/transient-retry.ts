import { setTimeout as sleep } from 'node:timers/promises';
import pRetry from 'p-retry';
import { RelayClientError } from './relay-client-error';

export interface TransientRetryOptions {
  /** Attempts after the first. */
  retries: number;
  /** The wait before the first retry; each later one is `factor` times longer, up to `maxDelayMs`. */
  minDelayMs: number;
  factor: number;
  maxDelayMs: number;
  /** A relay that asks for a longer wait than this (`Retry-After`) is not waited for: the error is thrown. */
  maxRetryAfterMs?: number;
  /** Told before each wait. */
  onRetry?: (error: RelayClientError, waitMs: number) => void;
}

/**
 * Runs `call`, and again after a transient failure (the relay unreachable, overloaded, rate
 * limited, or a service timed out), waiting the longer of the backoff and the relay's
 * `Retry-After`. Any other error, or the last transient one, is thrown as it is.
 */
export function retryTransient<T>(call: () => Promise<T>, options: TransientRetryOptions): Promise<T> {
  return pRetry(call, {
    retries: options.retries,
    minTimeout: options.minDelayMs,
    factor: options.factor,
    maxTimeout: options.maxDelayMs,
    // Decides before p-retry waits: throwing here ends the retries with this error.
    onFailedAttempt: async ({ error, retriesLeft, retriesConsumed }) => {
      // The wait p-retry takes next (randomize is off).
      const retryDelay = Math.min(Math.round(options.minDelayMs * options.factor ** retriesConsumed), options.maxDelayMs);
      if (!(error instanceof RelayClientError) || !error.transient || retriesLeft === 0) throw error;
      const retryAfterMs = (error.details.retryAfterSeconds ?? 0) * 1000;
      if (options.maxRetryAfterMs !== undefined && retryAfterMs > options.maxRetryAfterMs) throw error;
      options.onRetry?.(error, Math.max(retryDelay, retryAfterMs));
      if (retryAfterMs > retryDelay) await sleep(retryAfterMs - retryDelay);
    },
  });
}
