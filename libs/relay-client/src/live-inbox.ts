import type { RelayClient } from './relay-client';
import { RelayClientError } from './relay-client-error';
import type { InboxEvent } from './relay-types';

/**
 * Follows the agent's live inbox (`tasks/watch`) in the background and tells its user when
 * something changed. A broken or ended stream is opened again after `retryMs` with the last event
 * id, so that what happened in between still counts as a change.
 */
export class LiveInbox {
  private controller: AbortController | null = null;
  private lastEventId: string | undefined;
  private pending = 0;
  private connected = false;
  private readonly waiters = new Set<() => void>();
  private readonly listeners = new Set<(event: InboxEvent) => void>();

  constructor(
    private readonly client: RelayClient,
    private readonly retryMs: number,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** Whether the stream is open right now. */
  get isConnected(): boolean {
    return this.connected;
  }

  /**
   * Hands every task event (not `ready`) to `listener` as it arrives, replayed ones after a
   * reconnect included; returns the function that stops it.
   */
  onEvent(listener: (event: InboxEvent) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  start(): void {
    if (this.controller) return;
    this.controller = new AbortController();
    void this.run(this.controller.signal);
  }

  /** Waits until the stream is open, failed to open, or `timeoutMs` passed; true when it is open (a look taken then misses no change). */
  async opened(timeoutMs: number): Promise<boolean> {
    if (!this.connected && this.controller) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => done(), timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        this.waiters.add(done);
      });
    }
    return this.connected;
  }

  stop(): void {
    this.controller?.abort();
    this.controller = null;
    this.connected = false;
    this.wakeAll();
  }

  /**
   * Resolves true once an inbox event came since the previous call (at once if one did); false when
   * the stream opened or broke meanwhile, or, while it is down, after `fallbackMs`: the caller then
   * looks for itself.
   */
  async changed(fallbackMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.pending === 0 && this.controller && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const timer = this.connected ? undefined : setTimeout(() => done(), fallbackMs);
        const done = (): void => {
          if (timer) clearTimeout(timer);
          this.waiters.delete(done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        this.waiters.add(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
    const changed = this.pending > 0;
    this.pending = 0;
    return changed;
  }

  private wakeAll(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const onOpen = (): void => {
          this.connected = true;
          this.wakeAll();
        };
        for await (const event of this.client.watchInbox({ lastEventId: this.lastEventId, signal, onOpen })) {
          this.lastEventId = event.id || this.lastEventId;
          if (event.event === 'ready') continue;
          this.pending += 1;
          for (const listener of this.listeners) {
            try {
              listener(event);
            } catch (error) {
              this.onError(error);
            }
          }
          this.wakeAll();
        }
      } catch (error) {
        if (error instanceof RelayClientError && error.refusedResumeId) this.lastEventId = undefined;
        if (!signal.aborted) this.onError(error);
      }
      this.connected = false;
      this.wakeAll();
      if (signal.aborted) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.retryMs);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
  }
}
