import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Msg, Subscription } from '@nats-io/transport-node';
import { isTaskEvent, prefixedSubject, TASK_EVENT_POSITION_HEADER, TASK_EVENT_SUBJECT_PREFIX, type PositionedTaskEvent } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { HttpMetrics } from '@app/metrics';

export type FeedListener = (item: PositionedTaskEvent) => void;

/** How long the subscription outlives its last listener. */
export const IDLE_SUBSCRIPTION_MS = 2000;

/**
 * The task events as they are relayed to JetStream, for the edge's streams: one core NATS
 * subscription per edge on `<prefix>.relay.events.task.>`, held while at least one stream
 * listens and for IDLE_SUBSCRIPTION_MS after the last one left. Each event comes with its outbox
 * position (the `Relay-Event-Position` header), which orders a task's events and is the stream's
 * event id (docs/events.md#positions-and-stream-ids).
 */
@Injectable()
export class TaskEventFeed implements OnModuleDestroy {
  private readonly logger = new Logger(TaskEventFeed.name);
  private readonly byTask = new Map<string, Set<FeedListener>>();
  private readonly byAgent = new Map<string, Set<FeedListener>>();
  /** Listeners of every task event (the admin event stream). */
  private readonly everyEvent = new Map<string, Set<FeedListener>>();
  private readonly resyncListeners = new Set<() => void>();
  private watchingStatus = false;
  private subscription?: Subscription;
  private listenerCount = 0;
  private closed = false;
  /** Ends the subscription once it has had no listener for IDLE_SUBSCRIPTION_MS. */
  private idleTimer?: NodeJS.Timeout;

  constructor(
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(HttpMetrics) private readonly metrics: HttpMetrics,
  ) {}

  /** Shutting down: no more events (the streams still holding listeners end with their connections). */
  onModuleDestroy(): void {
    this.closed = true;
    clearTimeout(this.idleTimer);
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.report();
  }

  /** The events of one task, from now on; the returned function stops them (idempotent). */
  followTask(taskId: string, listener: FeedListener): () => void {
    return this.add(this.byTask, taskId, listener);
  }

  /** The events of every task an agent (by handle) takes part in, from now on. */
  followAgent(handle: string, listener: FeedListener): () => void {
    return this.add(this.byAgent, handle, listener);
  }

  /** Every task event of the relay, from now on (the admin API's event stream). */
  followAll(listener: FeedListener): () => void {
    return this.add(this.everyEvent, 'all', listener);
  }

  /**
   * Called when the NATS connection was re-established: core NATS does not replay what was
   * published while it was down, so a stream reads its task's log again from its last position.
   */
  onReconnect(listener: () => void): () => void {
    this.resyncListeners.add(listener);
    return () => void this.resyncListeners.delete(listener);
  }

  /** NATS subscriptions held and listeners registered (also exported as metrics). */
  get stats(): { subscriptions: number; listeners: number } {
    return { subscriptions: this.subscription ? 1 : 0, listeners: this.listenerCount };
  }

  private add(index: Map<string, Set<FeedListener>>, key: string, listener: FeedListener): () => void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.start();
    const set = index.get(key) ?? new Set<FeedListener>();
    index.set(key, set);
    set.add(listener);
    this.listenerCount += 1;
    this.report();
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      set.delete(listener);
      if (set.size === 0 && index.get(key) === set) index.delete(key);
      this.listenerCount -= 1;
      this.stopWhenIdle();
      this.report();
    };
  }

  /**
   * The SUB goes out on the connection before any request the listener's caller sends next, so an
   * event committed after the caller's next read of the outbox is not missed.
   */
  private start(): void {
    if (this.subscription || this.closed) return;
    this.watchStatus();
    const subject = prefixedSubject(this.rpc.subjectPrefix, `${TASK_EVENT_SUBJECT_PREFIX}.>`);
    this.subscription = this.rpc.connection.subscribe(subject, {
      callback: (error, message) => {
        if (error) {
          this.logger.warn({ err: error }, 'task event subscription error');
          return;
        }
        this.dispatch(message);
      },
    });
  }

  private watchStatus(): void {
    if (this.watchingStatus) return;
    this.watchingStatus = true;
    void (async () => {
      try {
        for await (const status of this.rpc.connection.status()) {
          if (status.type === 'reconnect') for (const listener of [...this.resyncListeners]) listener();
        }
      } catch (error) {
        this.logger.warn({ err: error }, 'NATS status stream ended');
      }
    })();
  }

  /**
   * Ends the subscription once no listener has come for IDLE_SUBSCRIPTION_MS after the last one
   * left: blocking sends one after another keep one subscription rather than subscribe and
   * unsubscribe around each (two protocol messages, and the server's interest changed twice).
   */
  private stopWhenIdle(): void {
    if (this.listenerCount > 0 || !this.subscription || this.idleTimer) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (this.listenerCount > 0 || !this.subscription) return;
      this.subscription.unsubscribe();
      this.subscription = undefined;
      this.report();
    }, IDLE_SUBSCRIPTION_MS);
    this.idleTimer.unref();
  }

  private report(): void {
    this.metrics.taskEventFeed(this.subscription ? 1 : 0, this.listenerCount);
  }

  private dispatch(message: Msg): void {
    // Kept a moment after the last listener left: nobody to read it for.
    if (this.listenerCount === 0) return;
    const position = message.headers?.get(TASK_EVENT_POSITION_HEADER);
    if (!position) return;
    let event: unknown;
    try {
      event = message.json<unknown>();
    } catch {
      return;
    }
    if (!isTaskEvent(event)) return;
    // The size it came in: what a stream's bounded buffer counts it as.
    const item: PositionedTaskEvent & { bytes?: number } = { position, event, bytes: message.data?.length };
    for (const listener of [...(this.everyEvent.get('all') ?? [])]) listener(item);
    for (const listener of [...(this.byTask.get(event.task_id) ?? [])]) listener(item);
    const sender = this.byAgent.get(event.sender);
    if (sender) for (const listener of [...sender]) listener(item);
    // An event meant for the sender alone (a task held for approval and never delivered) never reaches the recipient's streams.
    const recipient = event.recipient !== event.sender && event.audience !== 'sender' ? this.byAgent.get(event.recipient) : undefined;
    if (recipient) for (const listener of [...recipient]) listener(item);
  }
}
