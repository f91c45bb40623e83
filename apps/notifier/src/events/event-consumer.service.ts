import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import {
  AGENT_UPDATED_EVENT_SUBJECT,
  holdingOrgOf,
  isAgentEvent,
  isPushConfigEvent,
  isTaskEvent,
  prefixedSubject,
  PUSH_CONFIG_EVENTS,
  TASK_EVENT_SUBJECT_PREFIX,
  type DeliveryChannel,
  type TaskEvent,
} from '@app/contracts';
import {
  ensureEventStream,
  eventStreamName,
  HeldAcks,
  type JetStreamContext,
  keepReconnecting,
  natsInboxPrefix,
  openJetStream,
  RELAY_EVENTS_SUBJECT_ROOT,
} from '@app/messaging';
import { DeliveryMetrics, JetStreamConsumerMetrics, type ConsumerLag } from '@app/metrics';
import { traceLinkHeaders } from '@app/tracing';
import { DeliveriesService, type BegunDelivery, type EventDeliveries } from '../deliveries/deliveries.service';
import { notifies, planApproverDeliveries, planDeliveries, planPushDeliveries, tellsApprovers } from '../deliveries/delivery-planner';
import { DeliveryWorkerService } from '../deliveries/delivery-worker.service';
import { approverChannelsOf, NotifierConfig } from '../notifier.config';
import { OrgApprovalChannelsService } from '../approvals/org-approval-channels.service';
import { AgentTargetsService } from '../targets/agent-targets.service';
import type { AgentTarget } from '../targets/delivery-targets';
import { PushTargetsService } from '../targets/push-targets.service';
import { ConsumedInOrder } from './consumed-in-order';
import { TargetsFeedService } from './targets-feed.service';

/** Name of the notifier's durable consumer on the event stream (shared by its replicas). */
export const NOTIFIER_CONSUMER = 'notifier';

/** How long JetStream waits for an ack before it redelivers an event to another replica. */
const ACK_WAIT_MS = 30_000;
/** How long one pull request stays open at the server while no event comes (the client renews it). */
const PULL_EXPIRES_MS = 10_000;
/** The wait after the consumer failed to open, doubled after each next failure up to the max; also the pause after it ended. */
const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5000;
/** A task event whose targets could not be resolved (directory unreachable) is retried after this, doubling. */
const RETRY_BASE_MS = 1000;
const RETRY_MAX_MS = 30_000;
/** The longest an ack is held to go out with others (see `HeldAcks`); far below the ack wait. */
const ACK_HOLD_MS = 50;
/** Events pulled at once, at most. */
const PULL_BATCH = 64;

function retryDelay(deliveryCount: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(10, Math.max(0, deliveryCount - 1)));
}

/**
 * The notifier's durable JetStream consumer of relay events (explicit ack, a bounded number
 * pending), read in batches: agent and push-config events keep the delivery targets current; the
 * task events of a batch become their deliveries, recorded in one statement before the events are
 * acknowledged. A task event is acknowledged only once its deliveries are recorded, or once the
 * targets it names are known (held, or looked up from the directory) to need none; an event
 * redelivered after a crash records nothing new (deliveries are unique per event and target).
 * Acks are held for a moment and sent together; the targets of an event are read from memory
 * without awaiting anything unless one of its agents must be looked up, and its headers are read
 * only when it has deliveries: an event that needs none costs little more than its JSON.
 *
 * The push configs of a task event are read from memory, which this replica's own feed keeps
 * current; a config is set in the stream before the event that follows it. While the consumer's
 * own deliveries show that every push-config event before a task event is applied here (an
 * unbroken run of them, see `ConsumedInOrder`), it is planned at once; otherwise the batch waits
 * (up to RELAY_NOTIFIER_FEED_WAIT_MS) until that feed has read the stream up to its last task
 * event. A task event the feed has still not reached is handed back for redelivery, to this or
 * another replica, never planned without the configs set before it.
 */
@Injectable()
export class EventConsumerService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(EventConsumerService.name);
  private jetStream: JetStreamContext | null = null;
  private messages: ConsumerMessages | null = null;
  private loop: Promise<void> | null = null;
  private readonly stop = new AbortController();
  private readonly acks: HeldAcks;
  private readonly consumedInOrder = new ConsumedInOrder();

  constructor(
    @Inject(NotifierConfig) private readonly config: NotifierConfig,
    @Inject(AgentTargetsService) private readonly targets: AgentTargetsService,
    @Inject(PushTargetsService) private readonly pushTargets: PushTargetsService,
    @Inject(TargetsFeedService) private readonly feed: TargetsFeedService,
    @Inject(DeliveriesService) private readonly deliveries: DeliveriesService,
    @Inject(DeliveryWorkerService) private readonly worker: DeliveryWorkerService,
    @Inject(JetStreamConsumerMetrics) private readonly consumerMetrics: JetStreamConsumerMetrics,
    @Inject(DeliveryMetrics) private readonly deliveryMetrics: DeliveryMetrics,
    @Inject(OrgApprovalChannelsService) private readonly orgApprovals: OrgApprovalChannelsService,
  ) {
    // Half of what may be pending stays free for the server to hand out while acks are held.
    this.acks = new HeldAcks(Math.max(1, Math.floor(Math.min(config.RELAY_NOTIFIER_MAX_ACK_PENDING, PULL_BATCH) / 2)), ACK_HOLD_MS);
  }

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
    this.stop.abort();
    // Stops pulling; the events already received are still handled (and acked) before the loop ends.
    await this.messages?.close().catch(() => undefined);
    await this.loop;
    this.acks.flush();
    const jetStream = this.jetStream;
    this.jetStream = null;
    if (jetStream && !jetStream.connection.isClosed()) await jetStream.connection.drain().catch(() => undefined);
  }

  private run(): Promise<void> {
    return keepReconnecting(
      () => this.openConsumer(),
      async (messages) => {
        try {
          await this.drainInBatches(messages);
        } finally {
          this.acks.flush();
        }
      },
      {
        signal: this.stop.signal,
        minDelayMs: MIN_BACKOFF_MS,
        maxDelayMs: MAX_BACKOFF_MS,
        onInterrupted: (error, retryInMs) => this.logger.warn({ err: error, retry_in_ms: retryInMs }, 'event consumer interrupted'),
      },
    );
  }

  private async openConsumer(): Promise<ConsumerMessages> {
    const context = await this.connect();
    const consumer = await context.js.consumers.get(eventStreamName(this.config.NATS_SUBJECT_PREFIX), NOTIFIER_CONSUMER);
    this.messages = await consumer.consume({ max_messages: Math.min(this.config.RELAY_NOTIFIER_MAX_ACK_PENDING, PULL_BATCH), expires: PULL_EXPIRES_MS });
    if (this.stop.signal.aborted) {
      // Shutdown began while the pull was being set up: close it, or its timers outlive the service.
      await this.messages.close().catch(() => undefined);
      throw new Error('the notifier is stopping');
    }
    return this.messages;
  }

  /**
   * Handles what has arrived as one batch while the previous batch is being recorded: one event at
   * a time when idle (no added latency), bigger batches under load (fewer statements).
   */
  private async drainInBatches(messages: ConsumerMessages): Promise<void> {
    const buffer: JsMsg[] = [];
    let ended = false;
    let failure: unknown = null;
    const waiting: { wake: (() => void) | null } = { wake: null };
    const pump = (async () => {
      try {
        for await (const message of messages) {
          buffer.push(message);
          waiting.wake?.();
        }
      } catch (error) {
        failure = error;
      } finally {
        ended = true;
        waiting.wake?.();
      }
    })();
    for (;;) {
      if (buffer.length === 0) {
        if (ended) break;
        await new Promise<void>((resolve) => (waiting.wake = resolve));
        waiting.wake = null;
        continue;
      }
      await this.handleBatch(buffer.splice(0, buffer.length));
    }
    await pump;
    if (failure) throw failure;
  }

  private async connect(): Promise<JetStreamContext> {
    if (!this.jetStream || this.jetStream.connection.isClosed()) {
      this.jetStream = await openJetStream({
        url: this.config.natsServers,
        name: 'agentrelay-notifier-events',
        inboxPrefix: natsInboxPrefix('notifier', this.config.NATS_SUBJECT_PREFIX),
      });
    }
    const prefix = this.config.NATS_SUBJECT_PREFIX;
    await ensureEventStream(this.jetStream.jsm, prefix, this.config.RELAY_JETSTREAM_REPLICAS);
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
      await this.jetStream.jsm.consumers.update(stream, NOTIFIER_CONSUMER, {
        ack_wait: consumerConfig.ack_wait,
        max_ack_pending: consumerConfig.max_ack_pending,
      });
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound)) throw error;
      await this.jetStream.jsm.consumers.add(stream, consumerConfig);
    }
    return this.jetStream;
  }

  private async handleBatch(batch: JsMsg[]): Promise<void> {
    const prefixLength = prefixedSubject(this.config.NATS_SUBJECT_PREFIX, '').length;
    const toRecord: Array<{ message: JsMsg; deliveries: EventDeliveries }> = [];
    const aheadOfFeed: JsMsg[] = [];
    const waitStarted = performance.now();
    // Waited for only when the consumer's own deliveries do not show every push config before a task event applied here.
    let feedReadTo: number | null = null;
    for (const message of batch) {
      const subject = message.subject.slice(prefixLength);
      const consumed = { deliverySequence: message.info.deliverySequence, streamSequence: message.seq, firstDelivery: message.info.deliveryCount === 1 };
      const isPushConfig = subject === PUSH_CONFIG_EVENTS.set || subject === PUSH_CONFIG_EVENTS.deleted;
      const pushConfigsApplied = this.consumedInOrder.next(consumed, isPushConfig);
      let payload: unknown;
      try {
        payload = message.json<unknown>();
      } catch {
        this.logger.error({ subject, seq: message.seq }, 'dropped an event that is not JSON');
        message.term('not JSON');
        continue;
      }
      try {
        if (subject.startsWith(`${TASK_EVENT_SUBJECT_PREFIX}.`)) {
          if (!isTaskEvent(payload)) {
            this.logger.error({ subject, seq: message.seq }, 'dropped a malformed task event');
            message.term('malformed task event');
            continue;
          }
          if (!notifies(payload) && payload.type !== 'held') {
            // An artifact's own event is for live streams; nobody is notified of it.
            this.acks.add(message);
            continue;
          }
          if (!pushConfigsApplied && feedReadTo === null) {
            feedReadTo = await this.pushConfigsReadTo(batch);
            this.consumedInOrder.reached(feedReadTo);
          }
          if (!pushConfigsApplied && message.seq > (feedReadTo ?? 0)) {
            aheadOfFeed.push(message);
            continue;
          }
          const parties = [payload.sender, payload.recipient];
          const deliveries = await this.plan(payload, this.targets.held(parties) ?? (await this.lookUp(parties)), message);
          // Nothing to deliver, decided from targets known for these agents: done with it.
          if (deliveries.planned.length === 0) this.acks.add(message);
          else toRecord.push({ message, deliveries });
          continue;
        }
        if (subject === AGENT_UPDATED_EVENT_SUBJECT) {
          if (!isAgentEvent(payload)) {
            this.logger.error({ subject, seq: message.seq }, 'dropped a malformed agent event');
            message.term('malformed agent event');
            continue;
          }
          await this.targets.apply(payload);
        } else if (isPushConfig) {
          if (!isPushConfigEvent(payload)) {
            this.logger.error({ subject, seq: message.seq }, 'dropped a malformed push config event');
            message.term('malformed push config event');
            continue;
          }
          await this.pushTargets.apply(payload);
          this.consumedInOrder.appliedPushConfig(consumed);
        }
        this.acks.add(message);
      } catch (error) {
        const retryInMs = retryDelay(message.info.deliveryCount);
        this.logger.warn({ err: error, subject, seq: message.seq, retry_in_ms: retryInMs }, 'event handling failed; it will be redelivered');
        message.nak(retryInMs);
      }
    }
    if (aheadOfFeed.length > 0) this.handBack(aheadOfFeed, feedReadTo ?? 0, performance.now() - waitStarted);
    if (toRecord.length === 0) return;
    // Upstream deliveries this process has slots for now are recorded with their first attempt begun, and sent at once.
    const leases = this.worker.reserve(toRecord.flatMap((entry) => entry.deliveries.planned));
    let recorded: { channels: DeliveryChannel[]; begun: BegunDelivery[] };
    try {
      recorded = await this.deliveries.recordMany(
        toRecord.map((entry) => entry.deliveries),
        leases,
      );
    } catch (error) {
      this.worker.unreserve(leases.keys());
      this.logger.warn({ err: error, events: toRecord.length }, 'could not record deliveries; the events will be redelivered');
      for (const { message } of toRecord) message.nak(retryDelay(message.info.deliveryCount));
      return;
    }
    this.worker.adopt(recorded.begun);
    // Recorded already (a redelivered event): its slot is given back.
    if (recorded.begun.length < leases.size) {
      const adopted = new Set(recorded.begun.map((begun) => begun.planned));
      this.worker.unreserve([...leases.keys()].filter((planned) => !adopted.has(planned)));
    }
    for (const { message } of toRecord) this.acks.add(message);
    for (const channel of recorded.channels) this.deliveryMetrics.recorded(channel);
    if (recorded.channels.length > recorded.begun.length) this.worker.wake();
  }

  /** Waits until this replica's push-config feed has read the stream up to the batch's last task event; the sequence it has read up to. */
  private async pushConfigsReadTo(batch: JsMsg[]): Promise<number> {
    const taskSubjects = prefixedSubject(this.config.NATS_SUBJECT_PREFIX, `${TASK_EVENT_SUBJECT_PREFIX}.`);
    let last = 0;
    for (const message of batch) if (message.subject.startsWith(taskSubjects) && message.seq > last) last = message.seq;
    return last === 0 ? 0 : this.feed.pushConfigsReadTo(last, this.config.RELAY_NOTIFIER_FEED_WAIT_MS);
  }

  /** Task events the push-config feed has not reached in time: redelivered later (here or to another replica), counted and logged. */
  private handBack(messages: JsMsg[], feedReadTo: number, waitedMs: number): void {
    for (const message of messages) message.nak(retryDelay(message.info.deliveryCount));
    this.deliveryMetrics.aheadOfFeed(messages.length);
    this.logger.warn(
      { events: messages.length, first_seq: messages[0].seq, feed_read_to: feedReadTo, waited_ms: Math.round(waitedMs) },
      'push-config feed behind the task events; they will be redelivered',
    );
  }

  /** The targets of agents not all held in memory: looked up from the directory; one it does not know has none. */
  private async lookUp(handles: string[]): Promise<Map<string, AgentTarget>> {
    const targets = new Map<string, AgentTarget>();
    for (const [handle, target] of await this.targets.resolve(handles)) if (target) targets.set(handle, target);
    return targets;
  }

  /** The trace headers of `message` go with each delivery, so that its attempts continue the trace of the event's handoff (docs/chains.md). */
  private async plan(event: TaskEvent, targets: Map<string, AgentTarget>, message: JsMsg): Promise<EventDeliveries> {
    const planned = [
      ...planDeliveries(event, targets, this.config.RELAY_THREAD_URL_TEMPLATE),
      ...planPushDeliveries(event, this.pushTargets.ofTask(event.task_id, Date.parse(event.occurred_at)), targets),
      ...(tellsApprovers(event)
        ? planApproverDeliveries(event, approverChannelsOf(this.config), await this.orgApprovals.slackChannelOf(holdingOrgOf(event.recipient)))
        : []),
    ];
    if (planned.length > 0) {
      const traceHeaders = traceLinkHeaders(message.headers);
      for (const delivery of planned) Object.assign(delivery.headers, traceHeaders);
    }
    return { eventId: event.event_id, taskId: event.task_id, planned };
  }
}
