import { ServerNats, type NatsOptions } from '@nestjs/microservices';
import { prefixedSubject } from '@app/contracts';

type NatsServerOptions = NonNullable<NatsOptions['options']>;

interface NatsSubscription {
  unsubscribe(): void;
}

/** What the server needs of the connection Nest hands to `bindEvents`. */
interface NatsConnectionLike {
  subscribe(subject: string, options: { queue?: string; callback: (error: Error | null, message: unknown) => unknown }): NatsSubscription;
  isClosed(): boolean;
  flush(): Promise<void>;
  drain(): Promise<void>;
}

/**
 * Nest's NATS transport, with every handler subscribed under a subject prefix and in the
 * service's queue group (handlers are still looked up by their unprefixed pattern), and a
 * graceful close: stop taking requests, let the in-flight ones answer, then drain the connection.
 */
export class RelayNatsServer extends ServerNats {
  private readonly ownSubscriptions: NatsSubscription[] = [];
  private connection?: NatsConnectionLike;
  private inFlight = 0;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(
    private readonly subjectPrefix: string,
    private readonly serverOptions: NatsServerOptions,
    private readonly shutdownTimeoutMs = 10_000,
  ) {
    super({ ...serverOptions, gracefulShutdown: false });
  }

  override bindEvents(client: NatsConnectionLike): void {
    // The graceful close drains this connection: refuse to start if it could not.
    if (typeof client.drain !== 'function' || typeof client.flush !== 'function') {
      throw new Error('The NATS connection Nest handed to the server cannot be drained; shutting down would drop in-flight requests');
    }
    this.connection = client;
    const queue = this.serverOptions.queue;
    for (const [pattern, handler] of this.messageHandlers.entries()) {
      const handlerQueue = (handler.extras?.queue as string | undefined) ?? queue;
      const subscription = client.subscribe(prefixedSubject(this.subjectPrefix, pattern), {
        queue: handlerQueue,
        callback: this.getMessageHandler(pattern).bind(this),
      });
      this.ownSubscriptions.push(subscription);
    }
  }

  override async handleMessage(...args: Parameters<ServerNats['handleMessage']>): Promise<unknown> {
    this.inFlight += 1;
    try {
      return await super.handleMessage(...args);
    } finally {
      this.inFlight -= 1;
      if (this.inFlight === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
    }
  }

  /** Requests being handled right now. */
  get inFlightRequests(): number {
    return this.inFlight;
  }

  override async close(): Promise<void> {
    for (const subscription of this.ownSubscriptions.splice(0)) subscription.unsubscribe();
    await this.waitUntilIdle();
    const connection = this.connection;
    this.connection = undefined;
    if (connection && !connection.isClosed()) {
      await connection.flush().catch(() => undefined);
      await connection.drain().catch(() => undefined);
    }
    await super.close();
  }

  private waitUntilIdle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, this.shutdownTimeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
