import { Logger } from '@nestjs/common';
import { ServerNats, type NatsOptions } from '@nestjs/microservices';
import { SUBJECTS_ADDRESSED_BY_NAME, prefixedSubject, RelayError, OVERLOADED_RETRY_AFTER_SECONDS } from '@app/contracts';
import { PERMISSION_PROBE_HEADER } from './nats-permission-check';
import { isPermittedReply } from './nats-permissions';
import { deadlineOf } from './request-deadline';
import { ServiceLoad } from './service-load';

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

/** The parts of a NATS message a refusal needs. */
interface IncomingRequest {
  subject: string;
  reply?: string;
  headers?: { get(name: string): string };
  respond(data: string): boolean;
}

/**
 * Nest's NATS transport, with every handler subscribed under a subject prefix and in the
 * service's queue group (handlers are still looked up by their unprefixed pattern), and a
 * graceful close: stop taking requests, let the in-flight ones answer, then drain the connection.
 *
 * Work is bounded: a request whose caller's deadline has passed is not started (the caller gave up
 * on it), and past `maxInFlight` requests at once a request is refused at once as `overloaded`
 * rather than queued into the caller's timeout. Health checks are always answered.
 *
 * A request leaves the in-flight count on every path, also when its reply cannot be published (one
 * larger than the NATS server's `max_payload` throws in nats.js): the caller is then told so with an
 * error reply instead of waiting for its timeout.
 */
export class RelayNatsServer extends ServerNats {
  private readonly ownSubscriptions: NatsSubscription[] = [];
  private connection?: NatsConnectionLike;
  private readonly idleWaiters: Array<() => void> = [];
  private readonly guardLogger = new Logger('RelayNatsServer');
  /** How each request being handled leaves the in-flight count, once. */
  private readonly releases = new WeakMap<object, () => void>();

  constructor(
    private readonly subjectPrefix: string,
    private readonly serverOptions: NatsServerOptions,
    private readonly shutdownTimeoutMs = 10_000,
    readonly load = new ServiceLoad(),
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
      const subscription = client.subscribe(prefixedSubject(this.subjectPrefix, SUBJECTS_ADDRESSED_BY_NAME[pattern] ?? pattern), {
        queue: handlerQueue,
        callback: this.getMessageHandler(pattern).bind(this),
      });
      this.ownSubscriptions.push(subscription);
    }
  }

  override async handleMessage(...args: Parameters<ServerNats['handleMessage']>): Promise<unknown> {
    const [channel, message] = args as unknown as [string, IncomingRequest];
    // A process checking its NATS permissions at start: not a request, never answered. Nor is a
    // message JetStream pushed here for a consumer (its reply is an ack subject): events are no requests.
    if (message.headers?.get(PERMISSION_PROBE_HEADER) || message.reply?.startsWith('$JS.')) return undefined;
    if (!isPermittedReply(message.subject, message.reply, this.subjectPrefix)) {
      // Answering would publish onto a subject of the caller's choosing with this service's rights.
      this.load.misdirected();
      this.guardLogger.warn(
        { subject: message.subject, reply: message.reply ?? null },
        'request dropped unanswered: its reply subject is not the caller’s inbox',
      );
      return undefined;
    }
    const refusal = this.refusal(channel, message);
    if (refusal) {
      // Nest's reply packet; the caller reads `err` (NatsRpcClient does not match reply ids).
      if (message.reply) message.respond(JSON.stringify({ err: refusal.toBody(), isDisposed: true }));
      return undefined;
    }
    // A request is in flight until its last reply packet is published: Nest's handleMessage
    // returns as soon as the handler's observable is set up, before the work is done.
    this.load.started();
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.load.finished();
      if (this.load.inFlight === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
    };
    this.releases.set(args[1], release);
    try {
      const handled: unknown = await super.handleMessage(...args);
      if (!message.reply) release();
      return handled;
    } catch (error) {
      release();
      throw error;
    }
  }

  /**
   * Every handler is registered under a subject, so a request's subject is its route as it is.
   * Nest would first try it as JSON (for object patterns, which the relay has none of): a parse
   * that fails on every request, building an error each time.
   */
  override getRouteFromPattern(pattern: string): string {
    return this.normalizePattern(pattern);
  }

  override getPublisher(...args: Parameters<ServerNats['getPublisher']>): (response: unknown) => unknown {
    const publish = super.getPublisher(...args);
    const release = this.releases.get(args[0]);
    const subject = (args[0] as { subject?: string }).subject ?? 'unknown';
    return (packet: unknown) => {
      const { isDisposed, err } = (packet ?? {}) as { isDisposed?: boolean; err?: unknown };
      const last = isDisposed === true || err !== undefined;
      try {
        return publish(packet);
      } catch (error) {
        if (err === undefined) this.answerUnpublishable(publish, subject, error);
        throw error;
      } finally {
        if (last) release?.();
      }
    };
  }

  /** Tells the caller that its reply could not be sent (the error is small enough to be), rather than letting it time out. */
  private answerUnpublishable(publish: (packet: unknown) => unknown, subject: string, error: unknown): void {
    const reason = error instanceof Error ? error.message : String(error);
    this.guardLogger.error({ subject, error: reason }, 'reply not published; the caller gets an error instead');
    const refusal = new RelayError('internal_error', `The service could not send its answer (${reason})`, { cause: 'reply_not_published' });
    try {
      publish({ err: refusal.toBody(), isDisposed: true });
    } catch (secondError) {
      this.guardLogger.error({ subject, error: (secondError as Error).message }, 'error reply not published either');
    }
  }

  /** Why a request is not started: its caller's deadline passed, or too many requests are in flight. */
  private refusal(channel: string, message: IncomingRequest): RelayError | null {
    if (channel.endsWith('.health')) return null;
    const deadline = deadlineOf(message.headers);
    if (deadline !== undefined && Date.now() >= deadline) {
      this.guardLogger.warn({ subject: channel, late_ms: Date.now() - deadline }, 'request not started: its caller stopped waiting');
      return new RelayError('service_timeout', `The request reached the service after its caller stopped waiting (${channel}); it was not carried out`, {
        subject: channel,
      });
    }
    if (!this.load.hasRoom) {
      this.load.refused();
      this.guardLogger.warn({ subject: channel, in_flight: this.load.inFlight }, 'request shed: too many in flight');
      return new RelayError(
        'overloaded',
        `The service has ${this.load.inFlight} requests in flight, its maximum; retry after ${OVERLOADED_RETRY_AFTER_SECONDS} s`,
        {
          subject: channel,
          retry_after_seconds: OVERLOADED_RETRY_AFTER_SECONDS,
        },
      );
    }
    return null;
  }

  /** Requests being handled right now. */
  get inFlightRequests(): number {
    return this.load.inFlight;
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
    if (this.load.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, this.shutdownTimeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
