import {
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  type ConsumerInfo,
  type ConsumerMessages,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { randomUUID } from 'node:crypto';
import { connect, errors, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import pRetry, { AbortError } from 'p-retry';
import { parseNatsServers, type NatsCredentials } from '@app/config';
import {
  EVENT_CONSUMER_NAME,
  EVENT_CONSUMER_SUBJECTS,
  eventConsumerEnsureSubject,
  isRelayErrorBody,
  prefixedSubject,
  TASK_EVENT_SUBJECT_PREFIX,
  type EnsureEventConsumerReply,
  type EnsureEventConsumerRequest,
  type TaskEvent,
} from '@app/contracts';
import { RELAY_EVENTS_SUBJECT_ROOT } from '@app/messaging/jetstream';
import { natsConnectOptions } from '@app/messaging/nats-connection';
import { eventStreamName } from '@app/messaging/jetstream';
import { EVENT_CONSUMER_JS_API_PREFIX, natsInboxPrefix } from '@app/messaging/nats-permissions';
import { OrderedLanes } from './ordered-lanes';
import { RecentIds } from './recent-ids';
import { readRelayEvent, UnreadableEventError, type RelayEvent } from './relay-event';

/** How long the notifier has to make the consumer. */
const ENSURE_TIMEOUT_MS = 10_000;

/** No notifier answers the ensure subject right now, or none in time: asking again can help. */
interface EnsureAnswer {
  response?: EnsureEventConsumerReply;
  err?: unknown;
}

function notifierAway(error: unknown): boolean {
  return (
    error instanceof errors.NoRespondersError ||
    error instanceof errors.TimeoutError ||
    (error instanceof errors.RequestError && (error.isNoResponders() || error.cause instanceof errors.TimeoutError))
  );
}

/**
 * The JetStream API prefix the consumer's account answers: the relay's JetStream API imported
 * under EVENT_CONSUMER_JS_API_PREFIX (the accounts `npm run nats:credentials` writes), else `$JS.API`.
 */
async function jetStreamApiPrefixOf(connection: NatsConnection, stream: string): Promise<string> {
  return connection.request(`${EVENT_CONSUMER_JS_API_PREFIX}.STREAM.INFO.${stream}`, '', { timeout: ENSURE_TIMEOUT_MS }).then(
    () => EVENT_CONSUMER_JS_API_PREFIX,
    () => '$JS.API',
  );
}

/** Where a new durable consumer starts reading the stream. */
export type StartPosition =
  /** Only events published after it was created (the default). */
  | { from: 'new' }
  /** Every event the stream still keeps (7 days). */
  | { from: 'beginning' }
  /** From a stream sequence on (a `RelayEvent.streamSequence`, or a snapshot's `stream_sequence` + 1). */
  | { from: 'sequence'; sequence: number }
  /** Every event the stream stored at or after `time`. */
  | { from: 'time'; time: Date };

export type RelayEventHandler<Data> = (event: RelayEvent<Data>) => Promise<void> | void;

/** Where the library says what it does; `console` by default. */
export interface ConsumerLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

export interface RelayEventConsumerOptions {
  /** NATS_URL: one server or several, comma-separated; credentials in it or in `credentials`. */
  url: string;
  /** The consumer's name: its credential (`npm run nats:credentials -- --consumer <name>`) is bound to the durable consumer of this name. */
  name: string;
  /** The relay's NATS_SUBJECT_PREFIX. */
  subjectPrefix?: string;
  /** The credential files (the nkey seed the credentials command wrote, a .creds file, TLS). */
  credentials?: NatsCredentials;
  /**
   * The JetStream API prefix of the consumer's NATS account: `EVENT_CONSUMER_JS_API_PREFIX` (`JS.RELAY.API`)
   * with the accounts `npm run nats:credentials` writes (the consumer's own account imports the relay's
   * JetStream API under it), `$JS.API` on a NATS without them. By default the library asks the first
   * and takes the second when nothing answers there.
   */
  jetStreamApiPrefix?: string;
  /** Other nats.js connection options (an authenticator of your own, timeouts); the inbox prefix is the library's. */
  connectOptions?: Partial<ConnectionOptions>;
  /** Unprefixed subjects to read, NATS wildcards allowed; `relay.events.task.>` by default. */
  subjects?: string[];
  /** Where the durable consumer starts when it does not exist yet (or on `restart`); `new` by default. */
  start?: StartPosition;
  /** Delete the durable consumer and start again at `start` (forgetting where it was). */
  restart?: boolean;
  /** Subjects (tasks) handled at once; one subject's events always one after the other. Default 16. */
  concurrency?: number;
  /** Events held in memory at most (received and not yet acknowledged); the stream sends no more until some are handled. Default 1000. */
  maxPending?: number;
  /** How long the stream waits for an acknowledgement before it sends an event again (the library keeps held events alive). Default 30 s. */
  ackWaitMs?: number;
  /** How many handled event ids are remembered to drop a redelivered duplicate. Default 100 000. */
  dedupeWindow?: number;
  /**
   * Asked about an event the stream delivers again (after a crash, a lost ack or a recovery):
   * whether your side has already handled it (e.g. its id is in your table). Without it such an
   * event is handed over again unless this process remembers it.
   */
  isHandled?: (eventId: string) => Promise<boolean> | boolean;
  /** First wait after a handler failed, doubled up to `maxRetryMs`; the event (and its task) waits meanwhile. Defaults 200 ms, 30 s. */
  minRetryMs?: number;
  maxRetryMs?: number;
  /**
   * How long the consumer keeps asking the relay for its durable consumer while no notifier answers,
   * or one answers that it cannot reach JetStream (restarting, or not reconnected after a NATS
   * restart yet). Default 60 s; then `start` fails.
   */
  notifierPatienceMs?: number;
  logger?: ConsumerLogger;
}

export interface ConsumerStats {
  handled: number;
  /** Deliveries dropped because the event was already handled (or being handled). */
  duplicates: number;
  /** Handler calls that threw and were retried. */
  failures: number;
  /** Messages that were not relay events (not JSON, no id): terminated. */
  unreadable: number;
  /** Events a snapshot already included (`startFromSnapshot`): acknowledged, not handed over. */
  beforeSnapshot: number;
}

/** One task of a snapshot: its id and the outbox position of the newest event its state includes. */
export interface SnapshotTask {
  id: string;
  last_event_position?: string | null;
}

interface Delivery<Data> {
  event: RelayEvent<Data>;
  messages: JsMsg[];
}

const CONSOLE_LOGGER: ConsumerLogger = {
  info: (message, fields) => console.info(message, fields ?? ''),
  warn: (message, fields) => console.warn(message, fields ?? ''),
};

function isNotFound(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound;
}

/**
 * A durable consumer of the relay's events for another Node service (docs/events.md#consumer-library):
 * explicit acks after the handler returns, duplicates dropped by event id, one subject's (task's)
 * events handled in stream order while others run concurrently, a bounded number held in memory,
 * reconnects, and a start position. It needs nothing but what an event consumer's credential
 * allows: its own durable consumer on the event stream and its own inbox prefix.
 *
 * One process per consumer name: on start, a consumer left with unacknowledged events (the last run
 * died) is made again from its acknowledgement floor, so those events come back in stream order
 * before any later one of their task.
 */
export class RelayEventConsumer<Data = TaskEvent> {
  readonly stats: ConsumerStats = { handled: 0, duplicates: 0, failures: 0, unreadable: 0, beforeSnapshot: 0 };
  private readonly recent: RecentIds;
  private readonly inFlight = new Map<string, Delivery<Data>>();
  private readonly lanes: OrderedLanes<Delivery<Data>>;
  private readonly logger: ConsumerLogger;
  private readonly stream: string;
  private messages: ConsumerMessages | null = null;
  private pump: Promise<void> | null = null;
  private keepAlive: NodeJS.Timeout | null = null;
  private stopping = false;
  /** Events at or below this stream sequence may have been handled by a previous run: `isHandled` is asked. */
  private recoveredUpTo = 0;
  /** The highest stream sequence received, and so where a lost consumer is made again from. */
  private highestReceived = 0;
  /** After a snapshot: each task's position the snapshot included; its events at or below it are skipped. */
  private readonly snapshotPositions = new Map<string, bigint>();
  /** The stream sequence the snapshot was taken at, and how many tasks it held (`startFromSnapshot`). */
  snapshot: { streamSequence: number; tasks: number } | null = null;

  private constructor(
    private readonly options: Required<
      Pick<
        RelayEventConsumerOptions,
        'name' | 'subjectPrefix' | 'subjects' | 'concurrency' | 'maxPending' | 'ackWaitMs' | 'minRetryMs' | 'maxRetryMs' | 'notifierPatienceMs'
      >
    > &
      RelayEventConsumerOptions,
    private readonly connection: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly handler: RelayEventHandler<Data>,
  ) {
    this.logger = options.logger ?? CONSOLE_LOGGER;
    this.recent = new RecentIds(options.dedupeWindow ?? 100_000);
    this.stream = eventStreamName(options.subjectPrefix);
    this.lanes = new OrderedLanes({ concurrency: options.concurrency, capacity: options.maxPending }, (_subject, delivery) => this.handle(delivery));
  }

  /** Connects, makes (or resumes) the durable consumer and starts handing events to `handler`. */
  static async start<Data = TaskEvent>(options: RelayEventConsumerOptions, handler: RelayEventHandler<Data>): Promise<RelayEventConsumer<Data>> {
    return RelayEventConsumer.connect(options, handler, async (consumer) => consumer.open(true));
  }

  /**
   * Snapshot + follow (docs/events.md#snapshot-and-follow), for a consumer that starts from the
   * current state of every open task rather than from the stream's history: reads the stream's last
   * sequence S, then every page of `snapshot` (e.g. `adminOpenTasks`, the admin API's list of open
   * tasks, each with the outbox position of the newest event its state includes) and hands each task
   * to `onSnapshotTask`; then makes the durable consumer again from S + 1 and follows, skipping every
   * event at or below its task's snapshot position. Every event committed after a task's row was read
   * is handled, and none the row already included.
   */
  static async startFromSnapshot<Data = TaskEvent, Row extends SnapshotTask = SnapshotTask>(
    options: RelayEventConsumerOptions,
    snapshot: { read: () => AsyncIterable<Row[]>; onSnapshotTask: (row: Row) => Promise<void> | void },
    handler: RelayEventHandler<Data>,
  ): Promise<RelayEventConsumer<Data>> {
    return RelayEventConsumer.connect({ ...options, restart: true }, handler, async (consumer) => {
      const streamSequence = (await consumer.jsm.streams.info(consumer.stream)).state.last_seq;
      let tasks = 0;
      for await (const page of snapshot.read()) {
        for (const row of page) {
          consumer.snapshotPositions.set(row.id, BigInt(row.last_event_position ?? '0'));
          await snapshot.onSnapshotTask(row);
          tasks++;
        }
      }
      consumer.snapshot = { streamSequence, tasks };
      consumer.options.start = { from: 'sequence', sequence: streamSequence + 1 };
      await consumer.open(true);
    });
  }

  private static async connect<Data>(
    options: RelayEventConsumerOptions,
    handler: RelayEventHandler<Data>,
    begin: (consumer: RelayEventConsumer<Data>) => Promise<void>,
  ): Promise<RelayEventConsumer<Data>> {
    if (!EVENT_CONSUMER_NAME.test(options.name))
      throw new Error(`An event consumer's name is 1-64 lowercase letters, digits or '_', starting with a letter (got ${JSON.stringify(options.name)})`);
    if ((options.subjects?.length ?? 1) !== 1) throw new Error('An event consumer reads one subject filter (e.g. relay.events.task.>)');
    const settings = {
      subjectPrefix: '',
      subjects: [`${TASK_EVENT_SUBJECT_PREFIX}.>`],
      concurrency: 16,
      maxPending: 1000,
      ackWaitMs: 30_000,
      minRetryMs: 200,
      maxRetryMs: 30_000,
      notifierPatienceMs: 60_000,
      ...options,
    };
    const servers = { ...parseNatsServers(options.url), credentials: options.credentials };
    const connection = await connect({
      ...natsConnectOptions(servers, natsInboxPrefix(`consumer_${options.name}`, settings.subjectPrefix)),
      name: `agentrelay-events-${options.name}`,
      maxReconnectAttempts: -1,
      ...options.connectOptions,
      inboxPrefix: natsInboxPrefix(`consumer_${options.name}`, settings.subjectPrefix),
    });
    try {
      const apiPrefix = options.jetStreamApiPrefix ?? (await jetStreamApiPrefixOf(connection, eventStreamName(settings.subjectPrefix)));
      const jsm = await jetstreamManager(connection, { apiPrefix, checkAPI: false });
      const consumer = new RelayEventConsumer<Data>({ ...settings, jetStreamApiPrefix: apiPrefix }, connection, jsm, handler);
      await begin(consumer);
      return consumer;
    } catch (error) {
      await connection.close().catch(() => undefined);
      throw error;
    }
  }

  /** Events received and not yet acknowledged. */
  get pending(): number {
    return this.lanes.size;
  }

  /** How far behind the consumer is: events the stream has not delivered to it yet, and delivered ones not acknowledged. */
  async lag(): Promise<{ undelivered: number; unacknowledged: number; lastDeliveredSequence: number }> {
    const info = await this.jsm.consumers.info(this.stream, this.options.name);
    return { undelivered: info.num_pending, unacknowledged: info.num_ack_pending, lastDeliveredSequence: info.delivered.stream_seq };
  }

  /**
   * Stops pulling, lets the handler finish what it holds (a handler that keeps failing is left, its
   * event unacknowledged for the next run), and closes the connection.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.messages?.close().catch(() => undefined);
    await this.pump?.catch(() => undefined);
    await this.lanes.idle();
    if (this.keepAlive) clearInterval(this.keepAlive);
    if (!this.connection.isClosed()) await this.connection.drain().catch(() => undefined);
  }

  /** What the notifier is asked for: this consumer's filter, bounds and, when made anew, its start. */
  private ensureRequest(start: StartPosition, reset: boolean): EnsureEventConsumerRequest {
    const root = `${RELAY_EVENTS_SUBJECT_ROOT}.`;
    const subject = this.options.subjects[0];
    if (!subject.startsWith(root)) throw new Error(`An event consumer reads subjects under ${root} (got ${subject})`);
    const position: EnsureEventConsumerRequest =
      start.from === 'beginning'
        ? { start: 'all' }
        : start.from === 'sequence'
          ? { start: 'sequence', start_sequence: start.sequence }
          : start.from === 'time'
            ? { start: 'time', start_time: start.time.toISOString() }
            : { start: 'new' };
    return {
      ...position,
      filter_subject: subject.slice(root.length),
      // The stream sends no more than the library may hold, and a little it is pulling.
      max_ack_pending: this.options.maxPending + 100,
      ack_wait_ms: this.options.ackWaitMs,
      reset,
    };
  }

  /**
   * Has the notifier make (or, with `reset`, make anew) this durable pull consumer: the consumer's
   * credential may read and ack it, not make it (docs/nats-security.md#adding-an-event-consumer).
   */
  private async ensure(start: StartPosition, reset: boolean): Promise<EnsureEventConsumerReply> {
    const subject = prefixedSubject(this.options.subjectPrefix, eventConsumerEnsureSubject(this.options.name));
    const packet = JSON.stringify({ id: randomUUID(), pattern: EVENT_CONSUMER_SUBJECTS.ensure, data: this.ensureRequest(start, reset) });
    const startedAt = Date.now();
    const reply = await pRetry(
      async () => {
        let answered: EnsureAnswer;
        try {
          answered = (await this.connection.request(subject, packet, { timeout: ENSURE_TIMEOUT_MS })).json<EnsureAnswer>();
        } catch (error) {
          if (!notifierAway(error) || Date.now() - startedAt > this.options.notifierPatienceMs) throw new AbortError(error as Error);
          this.logger.warn('events consumer: no notifier answered; asking again', { consumer: this.options.name, subject });
          throw error;
        }
        if (isRelayErrorBody(answered.err) && answered.err.reason === 'service_unavailable' && Date.now() - startedAt <= this.options.notifierPatienceMs) {
          this.logger.warn('events consumer: the notifier could not reach JetStream; asking again', { consumer: this.options.name, subject });
          throw new Error(answered.err.message);
        }
        return answered;
      },
      { retries: 1_000, minTimeout: 250, maxTimeout: 5_000 },
    );
    if (reply.err !== undefined && reply.err !== null) {
      const reason = isRelayErrorBody(reply.err) ? `${reply.err.reason}: ${reply.err.message}` : JSON.stringify(reply.err);
      throw new Error(`The relay did not make event consumer ${this.options.name} (${reason})`);
    }
    if (!reply.response) throw new Error(`The relay answered ${subject} without a consumer`);
    return reply.response;
  }

  private async info(): Promise<ConsumerInfo | null> {
    try {
      return await this.jsm.consumers.info(this.stream, this.options.name);
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  /** Makes the durable consumer again from `sequence`: what was delivered and not acknowledged comes back in stream order. */
  private async recreateFrom(sequence: number, deliveredUpTo: number): Promise<void> {
    await this.ensure({ from: 'sequence', sequence }, true);
    this.recoveredUpTo = Math.max(this.recoveredUpTo, deliveredUpTo);
  }

  private async open(first: boolean): Promise<void> {
    const info = await this.info();
    if (first && info && this.options.restart) {
      await this.ensure(this.options.start ?? { from: 'new' }, true);
    } else if (!info) {
      if (first) await this.ensure(this.options.start ?? { from: 'new' }, false);
      // Lost while running (NATS lost its store, someone deleted it): on from the first event not acknowledged.
      else await this.recreateFrom(this.lowestUnacknowledged(), this.highestReceived);
    } else if (first && info.num_ack_pending > 0) {
      this.logger.warn('events consumer: the last run left events unacknowledged; reading again from its acknowledgement floor', {
        consumer: this.options.name,
        unacknowledged: info.num_ack_pending,
        from_sequence: info.ack_floor.stream_seq + 1,
      });
      await this.recreateFrom(info.ack_floor.stream_seq + 1, info.delivered.stream_seq);
    }
    const consumer = await jetstream(this.connection, { apiPrefix: this.options.jetStreamApiPrefix }).consumers.get(this.stream, this.options.name);
    // Pulls expire after 10 s (heartbeats every 5 s), so a pull lost with a connection is noticed and made again soon.
    const messages = await consumer.consume({ max_messages: Math.min(256, this.options.maxPending), expires: 10_000 });
    this.messages = messages;
    this.keepAlive ??= setInterval(() => this.touchHeld(), Math.max(1000, Math.floor(this.options.ackWaitMs / 3)));
    this.keepAlive.unref();
    void this.watch(messages);
    this.pump = this.read(messages);
  }

  private lowestUnacknowledged(): number {
    let lowest = this.highestReceived + 1;
    for (const delivery of this.inFlight.values()) lowest = Math.min(lowest, delivery.event.streamSequence);
    return lowest;
  }

  /** A consumer deleted under the library is made again where it was. */
  private async watch(messages: ConsumerMessages): Promise<void> {
    for await (const status of messages.status()) {
      if (this.stopping || this.messages !== messages) return;
      if (status.type === 'consumer_deleted' || (status.type === 'consumer_not_found' && status.count >= 2)) {
        this.logger.warn('events consumer: the durable consumer is gone; making it again', { consumer: this.options.name, status: status.type });
        this.messages = null;
        await messages.close().catch(() => undefined);
        await this.reopen();
        return;
      }
    }
  }

  private async reopen(): Promise<void> {
    for (let delay = 500; !this.stopping; delay = Math.min(delay * 2, 10_000)) {
      try {
        await this.open(false);
        return;
      } catch (error) {
        this.logger.warn('events consumer: could not make the durable consumer again; retrying', { consumer: this.options.name, error: String(error) });
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  private async read(messages: ConsumerMessages): Promise<void> {
    for await (const message of messages) {
      this.highestReceived = Math.max(this.highestReceived, message.seq);
      let event: RelayEvent<Data>;
      try {
        event = readRelayEvent<Data>(message, this.options.subjectPrefix);
      } catch (error) {
        if (!(error instanceof UnreadableEventError)) throw error;
        this.stats.unreadable++;
        this.logger.warn('events consumer: not a relay event; terminated', { sequence: message.seq, subject: message.subject, error: error.message });
        message.term();
        continue;
      }
      const held = this.inFlight.get(event.id);
      if (held) {
        // Delivered again while still held (an ack wait passed): acknowledged with it.
        held.messages.push(message);
        this.stats.duplicates++;
        continue;
      }
      if (this.recent.has(event.id) || ((event.redelivered || event.streamSequence <= this.recoveredUpTo) && (await this.alreadyHandled(event.id)))) {
        message.ack();
        this.recent.add(event.id);
        this.stats.duplicates++;
        continue;
      }
      const included = this.snapshotPositions.get(event.subject);
      if (included !== undefined && event.position !== null && BigInt(event.position) <= included) {
        // The snapshot's row of this task already included it.
        message.ack();
        this.stats.beforeSnapshot++;
        continue;
      }
      const delivery: Delivery<Data> = { event, messages: [message] };
      this.inFlight.set(event.id, delivery);
      await this.lanes.push(event.subject, delivery);
    }
  }

  private async alreadyHandled(id: string): Promise<boolean> {
    if (!this.options.isHandled) return false;
    for (let delay = this.options.minRetryMs; ; delay = Math.min(delay * 2, this.options.maxRetryMs)) {
      try {
        return await this.options.isHandled(id);
      } catch (error) {
        this.logger.warn('events consumer: isHandled failed; asking again', { event_id: id, error: String(error) });
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** Runs the handler until it succeeds (the task's later events wait), then acknowledges. */
  private async handle(delivery: Delivery<Data>): Promise<void> {
    for (let delay = this.options.minRetryMs; ; delay = Math.min(delay * 2, this.options.maxRetryMs)) {
      try {
        await this.handler(delivery.event);
        break;
      } catch (error) {
        this.stats.failures++;
        this.logger.warn('events consumer: handler failed; retrying', { event_id: delivery.event.id, subject: delivery.event.subject, error: String(error) });
        if (this.stopping) {
          // Left unacknowledged: the next run reads it again, before its task's later events.
          this.inFlight.delete(delivery.event.id);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
    for (const message of delivery.messages) message.ack();
    this.inFlight.delete(delivery.event.id);
    this.recent.add(delivery.event.id);
    this.stats.handled++;
  }

  /** Tells the stream the events held are being worked on, so that none is sent again while it waits its turn. */
  private touchHeld(): void {
    for (const delivery of this.inFlight.values()) delivery.messages[delivery.messages.length - 1].working();
  }
}
