import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import {
  AGENT_UPDATED_EVENT_SUBJECT,
  prefixedSubject,
  PUSH_CONFIG_EVENTS,
  TASK_EVENT_SUBJECT_PREFIX,
  TASK_EVENT_TYPES,
  type AgentUpdatedEvent,
  type PushConfigEvent,
  type TaskEvent,
} from '@app/contracts';
import { ensureEventStream, eventStreamName, openJetStream, RELAY_EVENTS_SUBJECT_ROOT, type JetStreamContext } from '@app/messaging';
import { DeliveryMetrics, JetStreamConsumerMetrics, type ConsumerLag } from '@app/metrics';
import { traceLinkHeaders } from '@app/tracing';
import { DeliveriesService } from '../deliveries/deliveries.service';
import { planDeliveries } from '../deliveries/delivery-planner';
import { DeliveryWorkerService } from '../deliveries/delivery-worker.service';
import { NotifierConfig } from '../notifier.config';
import { AgentTargetsService } from '../targets/agent-targets.service';
import { PushTargetsService } from '../targets/push-targets.service';
import { planPushDeliveries } from '../deliveries/push-payload';

/** Name of the notifier's durable consumer on the event stream (shared by its replicas). */
export const NOTIFIER_CONSUMER = 'notifier';

/** How long JetStream waits for an ack before it redelivers an event to another replica. */
const ACK_WAIT_MS = 30_000;
const FETCH_EXPIRES_MS = 1000;
const MAX_BACKOFF_MS = 5000;
/**
 * A task event naming an agent the notifier has not heard of yet (its agent event is late) waits
 * this long, up to `UNKNOWN_AGENT_MAX_DELIVERIES` deliveries, before it is delivered without it.
 */
const UNKNOWN_AGENT_RETRY_MS = 1000;
const UNKNOWN_AGENT_MAX_DELIVERIES = 5;

class UnknownAgentError extends Error {}

function isTaskEvent(value: unknown): value is TaskEvent {
  const event = value as Partial<TaskEvent> | null;
  return (
    typeof event === 'object' &&
    event !== null &&
    typeof event.event_id === 'string' &&
    typeof event.task_id === 'string' &&
    typeof event.sender === 'string' &&
    typeof event.recipient === 'string' &&
    TASK_EVENT_TYPES.includes(event.type as TaskEvent['type']) &&
    typeof event.task === 'object' &&
    event.task !== null
  );
}

function isPushConfigEvent(value: unknown): value is PushConfigEvent {
  const event = value as Partial<PushConfigEvent> | null;
  return (
    typeof event === 'object' &&
    event !== null &&
    typeof event.event_id === 'string' &&
    typeof event.task_id === 'string' &&
    typeof event.config_id === 'string' &&
    typeof event.owner === 'string' &&
    (event.version === '0.3' || event.version === '1.0') &&
    typeof event.deleted === 'boolean' &&
    typeof event.occurred_at === 'string' &&
    (event.deleted || typeof event.url === 'string')
  );
}

function isAgentEvent(value: unknown): value is AgentUpdatedEvent {
  const event = value as Partial<AgentUpdatedEvent> | null;
  return (
    typeof event === 'object' &&
    event !== null &&
    typeof event.event_id === 'string' &&
    typeof event.agent_id === 'string' &&
    typeof event.handle === 'string' &&
    typeof event.occurred_at === 'string' &&
    typeof event.disabled === 'boolean'
  );
}

/**
 * The notifier's durable JetStream consumer of relay events (explicit ack, a bounded number
 * pending): agent events keep the delivery targets current; each task event becomes its
 * deliveries, recorded before the event is acknowledged. An event redelivered after a crash
 * records nothing new (deliveries are unique per event and target).
 */
@Injectable()
export class EventConsumerService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(EventConsumerService.name);
  private jetStream: JetStreamContext | null = null;
  private loop: Promise<void> | null = null;
  private stopping = false;
  private stopSleep: (() => void) | null = null;

  constructor(
    @Inject(NotifierConfig) private readonly config: NotifierConfig,
    @Inject(AgentTargetsService) private readonly targets: AgentTargetsService,
    @Inject(PushTargetsService) private readonly pushTargets: PushTargetsService,
    @Inject(DeliveriesService) private readonly deliveries: DeliveriesService,
    @Inject(DeliveryWorkerService) private readonly worker: DeliveryWorkerService,
    @Inject(JetStreamConsumerMetrics) private readonly consumerMetrics: JetStreamConsumerMetrics,
    @Inject(DeliveryMetrics) private readonly deliveryMetrics: DeliveryMetrics,
  ) {}

  onApplicationBootstrap(): void {
    this.consumerMetrics.watch(NOTIFIER_CONSUMER, () => this.consumerLag());
    this.loop = this.run();
  }

  /** How far the durable consumer is behind the stream (undefined while not connected). */
  async consumerLag(): Promise<ConsumerLag | undefined> {
    const jetStream = this.jetStream;
    if (!jetStream || jetStream.connection.isClosed()) return undefined;
    const info = await jetStream.jsm.consumers.info(eventStreamName(this.config.NATS_SUBJECT_PREFIX), NOTIFIER_CONSUMER);
    return { pending: info.num_pending, ackPending: info.num_ack_pending };
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    this.stopSleep?.();
    await this.loop;
    const jetStream = this.jetStream;
    this.jetStream = null;
    if (jetStream && !jetStream.connection.isClosed()) await jetStream.connection.drain().catch(() => undefined);
  }

  private async run(): Promise<void> {
    let backoffMs = 0;
    while (!this.stopping) {
      try {
        const context = await this.connect();
        const consumer = await context.js.consumers.get(eventStreamName(this.config.NATS_SUBJECT_PREFIX), NOTIFIER_CONSUMER);
        backoffMs = 0;
        while (!this.stopping) {
          const batch = await consumer.fetch({ max_messages: Math.min(this.config.RELAY_NOTIFIER_MAX_ACK_PENDING, 64), expires: FETCH_EXPIRES_MS });
          for await (const message of batch) await this.handle(message);
        }
      } catch (error) {
        if (this.stopping) break;
        backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs > 0 ? backoffMs * 2 : 100);
        this.logger.warn({ err: error, retry_in_ms: backoffMs }, 'event consumer interrupted');
        await this.sleep(backoffMs);
      }
    }
  }

  private async connect(): Promise<JetStreamContext> {
    if (!this.jetStream || this.jetStream.connection.isClosed()) {
      this.jetStream = await openJetStream({ url: this.config.NATS_URL, name: 'agentrelay-notifier-events' });
    }
    const prefix = this.config.NATS_SUBJECT_PREFIX;
    await ensureEventStream(this.jetStream.jsm, prefix);
    const stream = eventStreamName(prefix);
    const consumerConfig = {
      durable_name: NOTIFIER_CONSUMER,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ACK_WAIT_MS),
      max_ack_pending: this.config.RELAY_NOTIFIER_MAX_ACK_PENDING,
      deliver_policy: DeliverPolicy.All,
      filter_subject: prefixedSubject(prefix, `${RELAY_EVENTS_SUBJECT_ROOT}.>`),
    };
    try {
      await this.jetStream.jsm.consumers.info(stream, NOTIFIER_CONSUMER);
      await this.jetStream.jsm.consumers.update(stream, NOTIFIER_CONSUMER, { ack_wait: consumerConfig.ack_wait, max_ack_pending: consumerConfig.max_ack_pending });
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound)) throw error;
      await this.jetStream.jsm.consumers.add(stream, consumerConfig);
    }
    return this.jetStream;
  }

  private async handle(message: JsMsg): Promise<void> {
    const subject = message.subject.slice(prefixedSubject(this.config.NATS_SUBJECT_PREFIX, '').length);
    let payload: unknown;
    try {
      payload = message.json<unknown>();
    } catch {
      this.logger.error({ subject, seq: message.seq }, 'dropped an event that is not JSON');
      message.term('not JSON');
      return;
    }
    try {
      if (subject.startsWith(`${TASK_EVENT_SUBJECT_PREFIX}.`)) {
        if (!isTaskEvent(payload)) {
          this.logger.error({ subject, seq: message.seq }, 'dropped a malformed task event');
          message.term('malformed task event');
          return;
        }
        await this.onTaskEvent(payload, message.info.deliveryCount, traceLinkHeaders(message.headers));
      } else if (subject === AGENT_UPDATED_EVENT_SUBJECT) {
        if (!isAgentEvent(payload)) {
          this.logger.error({ subject, seq: message.seq }, 'dropped a malformed agent event');
          message.term('malformed agent event');
          return;
        }
        await this.targets.apply(payload);
      } else if (subject === PUSH_CONFIG_EVENTS.set || subject === PUSH_CONFIG_EVENTS.deleted) {
        if (!isPushConfigEvent(payload)) {
          this.logger.error({ subject, seq: message.seq }, 'dropped a malformed push config event');
          message.term('malformed push config event');
          return;
        }
        await this.pushTargets.apply(payload);
      }
      message.ack();
    } catch (error) {
      if (error instanceof UnknownAgentError) {
        this.logger.debug({ subject, seq: message.seq, reason: error.message }, 'waiting for an agent event');
        message.nak(UNKNOWN_AGENT_RETRY_MS);
        return;
      }
      this.logger.warn({ err: error, subject, seq: message.seq }, 'event handling failed; it will be redelivered');
      message.nak(1000);
    }
  }

  /** `traceHeaders` go with each delivery, so that its attempts link back to the request that caused the event. */
  private async onTaskEvent(event: TaskEvent, deliveryCount: number, traceHeaders: Record<string, string>): Promise<void> {
    const targets = await this.targets.byHandles([event.sender, event.recipient]);
    const unknown = [event.sender, event.recipient].filter((handle) => !targets.has(handle));
    if (unknown.length > 0 && deliveryCount < UNKNOWN_AGENT_MAX_DELIVERIES) {
      throw new UnknownAgentError(`no agent event yet for ${unknown.join(', ')}`);
    }
    const planned = [...planDeliveries(event, targets, this.config.RELAY_THREAD_URL_TEMPLATE), ...planPushDeliveries(event, await this.pushTargets.ofTask(event.task_id))];
    if (planned.length === 0) return;
    for (const delivery of planned) Object.assign(delivery.headers, traceHeaders);
    const recorded = await this.deliveries.record(event.event_id, event.task_id, planned);
    for (const channel of recorded) this.deliveryMetrics.recorded(channel);
    if (recorded.length > 0) this.worker.wake();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.stopSleep = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
