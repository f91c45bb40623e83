import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, type ConsumerConfig, type ConsumerInfo } from '@nats-io/jetstream';
import { errors, nanos } from '@nats-io/transport-node';
import {
  EVENT_CONSUMER_MAX_ACK_PENDING,
  EVENT_CONSUMER_NAME,
  invalidParams,
  prefixedSubject,
  RelayError,
  type EnsureEventConsumerReply,
  type EnsureEventConsumerRequest,
} from '@app/contracts';
import { eventStreamName, natsInboxPrefix, openJetStream, RELAY_EVENTS_SUBJECT_ROOT, subjectMatches, type JetStreamContext } from '@app/messaging';
import { NotifierConfig } from '../notifier.config';
import { NOTIFIER_CONSUMER } from '../events/event-consumer.service';

const DEFAULT_MAX_ACK_PENDING = 1000;
const DEFAULT_ACK_WAIT_MS = 30_000;
const MAX_ACK_WAIT_MS = 10 * 60_000;
/** Names the relay's own consumers use, never an event consumer's. */
const RESERVED_NAMES = new Set([NOTIFIER_CONSUMER]);

/** The consumer's name from the subject the request came on (`…event_consumers.<name>.ensure`): NATS let only its holder publish there. */
export function consumerNameOf(subject: string): string {
  const tokens = subject.split('.');
  const name = tokens[tokens.length - 2] ?? '';
  if (tokens[tokens.length - 1] !== 'ensure' || !EVENT_CONSUMER_NAME.test(name)) throw invalidParams('subject', 'does not name an event consumer');
  if (RESERVED_NAMES.has(name)) throw invalidParams('subject', `names ${name}, a consumer of the relay itself`);
  return name;
}

/** The consumer's configuration from a request, every value checked here (this subject is where it enters the relay). */
export function consumerConfigOf(name: string, request: EnsureEventConsumerRequest, subjectPrefix: string): Partial<ConsumerConfig> {
  const root = prefixedSubject(subjectPrefix, `${RELAY_EVENTS_SUBJECT_ROOT}.>`);
  const filter = request.filter_subject === undefined ? root : prefixedSubject(subjectPrefix, `${RELAY_EVENTS_SUBJECT_ROOT}.${request.filter_subject}`);
  if (request.filter_subject !== undefined && (!/^[a-z0-9_*>.]+$/.test(request.filter_subject) || !subjectMatches(root, filter.replace(/[*>]/g, 'x')))) {
    throw invalidParams('filter_subject', 'is a subject under relay.events. (e.g. task.> or task.completed)');
  }
  const maxAckPending = request.max_ack_pending ?? DEFAULT_MAX_ACK_PENDING;
  if (maxAckPending < 1 || maxAckPending > EVENT_CONSUMER_MAX_ACK_PENDING) throw invalidParams('max_ack_pending', `is 1 to ${EVENT_CONSUMER_MAX_ACK_PENDING}`);
  const ackWaitMs = request.ack_wait_ms ?? DEFAULT_ACK_WAIT_MS;
  if (ackWaitMs < 1000 || ackWaitMs > MAX_ACK_WAIT_MS) throw invalidParams('ack_wait_ms', `is 1000 to ${MAX_ACK_WAIT_MS}`);
  const config: Partial<ConsumerConfig> = {
    durable_name: name,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(ackWaitMs),
    max_ack_pending: maxAckPending,
    filter_subject: filter,
  };
  switch (request.start ?? 'new') {
    case 'new':
      return { ...config, deliver_policy: DeliverPolicy.New };
    case 'all':
      return { ...config, deliver_policy: DeliverPolicy.All };
    case 'sequence':
      if (!Number.isSafeInteger(request.start_sequence) || (request.start_sequence ?? 0) < 1)
        throw invalidParams('start_sequence', 'is a stream sequence (1 or more) with start "sequence"');
      return { ...config, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: request.start_sequence };
    case 'time': {
      const time = request.start_time === undefined ? Number.NaN : Date.parse(request.start_time);
      if (Number.isNaN(time)) throw invalidParams('start_time', 'is an RFC 3339 time with start "time"');
      return { ...config, deliver_policy: DeliverPolicy.StartTime, opt_start_time: new Date(time).toISOString() };
    }
  }
}

function isConsumerNotFound(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound;
}

/** JetStream did not answer (its server restarting, this connection reconnecting): the caller may ask again. */
function jetStreamAway(error: unknown): boolean {
  return (
    error instanceof errors.TimeoutError ||
    error instanceof errors.NoRespondersError ||
    error instanceof errors.RequestError ||
    error instanceof errors.ClosedConnectionError ||
    (error instanceof JetStreamApiError && error.status === 503)
  );
}

/**
 * Makes and keeps internal event consumers' durable pull consumers on the event stream. Their
 * credentials can read and ack their own consumer but not make one: a consumer made by a caller
 * could deliver the stream to any subject (a push consumer), this one cannot (pull, no deliver subject).
 */
@Injectable()
export class EventConsumersService implements OnApplicationShutdown {
  private readonly logger = new Logger('EventConsumers');
  private context?: Promise<JetStreamContext>;

  constructor(@Inject(NotifierConfig) private readonly config: NotifierConfig) {}

  async ensure(subject: string, request: EnsureEventConsumerRequest): Promise<EnsureEventConsumerReply> {
    const name = consumerNameOf(subject);
    const config = consumerConfigOf(name, request, this.config.NATS_SUBJECT_PREFIX);
    try {
      return await this.ensureConsumer(name, config, request);
    } catch (error) {
      if (!jetStreamAway(error)) throw error;
      throw new RelayError('service_unavailable', `JetStream did not answer for event consumer ${name}; ask again`, { service: 'notifier' });
    }
  }

  private async ensureConsumer(name: string, config: Partial<ConsumerConfig>, request: EnsureEventConsumerRequest): Promise<EnsureEventConsumerReply> {
    const stream = eventStreamName(this.config.NATS_SUBJECT_PREFIX);
    const { jsm } = await this.jetStream();
    let info: ConsumerInfo | undefined;
    try {
      info = await jsm.consumers.info(stream, name);
    } catch (error) {
      if (!isConsumerNotFound(error)) throw error;
    }
    if (info && request.reset === true) {
      await jsm.consumers.delete(stream, name);
      info = undefined;
    }
    let created = false;
    if (info) {
      info = await jsm.consumers.update(stream, name, {
        ack_wait: config.ack_wait,
        max_ack_pending: config.max_ack_pending,
        filter_subject: config.filter_subject,
      });
    } else {
      info = await jsm.consumers.add(stream, config);
      created = true;
      this.logger.log(`event consumer ${name} made on ${stream} (start ${request.start ?? 'new'})`);
    }
    if (info.config.deliver_subject) throw new RelayError('internal_error', `consumer ${name} is a push consumer; reset it`);
    return { name, stream, created, num_pending: info.num_pending, delivered_stream_seq: info.delivered.stream_seq };
  }

  async onApplicationShutdown(): Promise<void> {
    const context = await this.context?.catch(() => undefined);
    await context?.connection.drain().catch(() => undefined);
  }

  private jetStream(): Promise<JetStreamContext> {
    this.context ??= openJetStream({
      url: this.config.natsServers,
      name: 'agentrelay-notifier-event-consumers',
      inboxPrefix: natsInboxPrefix('notifier', this.config.NATS_SUBJECT_PREFIX),
    }).catch((error: unknown) => {
      this.context = undefined;
      throw error;
    });
    return this.context;
  }
}
