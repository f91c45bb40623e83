import { setTimeout as sleep } from 'node:timers/promises';
import pRetry from 'p-retry';

export interface ReconnectOptions {
  /** Aborting it ends the loop: a wait ends at once, a session being used is left to its owner to close. */
  signal: AbortSignal;
  /** The wait after the first failed open, doubled after each next one up to `maxDelayMs`; also the pause after a session ends. */
  minDelayMs: number;
  maxDelayMs: number;
  /** Told of each failure (of an open, or of a session), with the wait before the next open. */
  onInterrupted: (error: unknown, retryInMs: number) => void;
}

/**
 * Opens a session (a connection, a consumer) and uses it until it ends, again and again until
 * `signal` aborts. Opens that fail are retried with exponential backoff; a session that was open
 * and ended starts the backoff over, after a pause of `minDelayMs`, so one that keeps ending at
 * once does not spin.
 */
export async function keepReconnecting<Session>(
  open: () => Promise<Session>,
  use: (session: Session) => Promise<void>,
  options: ReconnectOptions,
): Promise<void> {
  const { signal, minDelayMs } = options;
  const pause = (): Promise<void> => sleep(minDelayMs, undefined, { signal }).catch(() => undefined);
  while (!signal.aborted) {
    let session: Session;
    try {
      session = await pRetry(open, {
        retries: Infinity,
        factor: 2,
        minTimeout: minDelayMs,
        maxTimeout: options.maxDelayMs,
        signal,
        // p-retry gives up on a TypeError (a bug rather than an outage): it is told here as any failure and the loop goes on below.
        onFailedAttempt: ({ error, retriesConsumed }) => {
          if (!signal.aborted) options.onInterrupted(error, Math.min(minDelayMs * 2 ** retriesConsumed, options.maxDelayMs));
        },
      });
    } catch {
      if (signal.aborted) return;
      await pause();
      continue;
    }
    try {
      await use(session);
      if (!signal.aborted) throw new Error('the session ended');
    } catch (error) {
      if (signal.aborted) return;
      options.onInterrupted(error, minDelayMs);
    }
    await pause();
  }
}
