import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { DeliverPolicy, type ConsumerMessages, type MsgRequest, type NextMsgRequest } from '@nats-io/jetstream';
import { AGENT_UPDATED_EVENT_SUBJECT, isAgentEvent, isPushConfigEvent, prefixedSubject, PUSH_CONFIG_EVENTS, type PushConfigEvent } from '@app/contracts';
import { ensureEventStream, eventStreamName, type JetStreamContext, keepReconnecting, natsInboxPrefix, openJetStream } from '@app/messaging';
import { NotifierConfig } from '../notifier.config';
import { AgentTargetsService } from '../targets/agent-targets.service';
import { PushTargetsService } from '../targets/push-targets.service';
import { FeedHorizon } from './feed-horizon';

/** The wait after a feed failed to open, doubled after each next failure up to the max; also the pause after it ended. */
const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5000;
/** The most push-config events a feed reads before applying them, while catching up. */
const CATCH_UP_BATCH = 500;
const PUSH_CONFIG_EVENTS_FILTER = PUSH_CONFIG_EVENTS.set.replace(/\.[^.]+$/, '.*');

/**
 * Every replica's own view of the agent and push-config events: an ordered (ephemeral, unacked)
 * consumer from the start of the stream that keeps this process's in-memory targets current,
 * whichever replica's durable consumer handles each event. Cheap: only these subjects, pushed.
 * How far the push-config feed has read the stream is its horizon (`pushConfigsReadTo`): a task
 * event of a later sequence may name a config this replica has not heard of yet.
 */
@Injectable()
export class TargetsFeedService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(TargetsFeedService.name);
  private jetStream: JetStreamContext | null = null;
  /** The connection being opened: both feeds share it (two opens at once would leave one undrained). */
  private opening: Promise<JetStreamContext> | null = null;
  private readonly open = new Set<ConsumerMessages>();
  private loops: Array<Promise<void>> = [];
  private readonly stop = new AbortController();
  private readonly pushConfigHorizon = new FeedHorizon((from) => this.nextPushConfigEvent(from));

  constructor(
    @Inject(NotifierConfig) private readonly config: NotifierConfig,
    @Inject(AgentTargetsService) private readonly targets: AgentTargetsService,
    @Inject(PushTargetsService) private readonly pushTargets: PushTargetsService,
  ) {}

  onApplicationBootstrap(): void {
    const prefix = this.config.NATS_SUBJECT_PREFIX;
    // One subject filter per ordered consumer (multiple filters need NATS 2.10).
    this.loops = [prefixedSubject(prefix, AGENT_UPDATED_EVENT_SUBJECT), prefixedSubject(prefix, PUSH_CONFIG_EVENTS_FILTER)].map((subject) => this.run(subject));
  }

  /**
   * Resolves once every push-config event of the stream up to `seq` is applied to this replica's
   * memory, with the sequence read up to (at least `seq`); after `timeoutMs` with the sequence read
   * up to by then, below `seq`.
   */
  pushConfigsReadTo(seq: number, timeoutMs: number): Promise<number> {
    return this.pushConfigHorizon.reach(seq, timeoutMs);
  }

  async onModuleDestroy(): Promise<void> {
    this.stop.abort();
    this.pushConfigHorizon.release();
    await Promise.all([...this.open].map((messages) => messages.close().catch(() => undefined)));
    await Promise.all(this.loops);
    const jetStream = this.jetStream;
    this.jetStream = null;
    if (jetStream && !jetStream.connection.isClosed()) await jetStream.connection.drain().catch(() => undefined);
  }

  private run(filter: string): Promise<void> {
    return keepReconnecting(
      () => this.openFeed(filter),
      (messages) => this.follow(messages),
      {
        signal: this.stop.signal,
        minDelayMs: MIN_BACKOFF_MS,
        maxDelayMs: MAX_BACKOFF_MS,
        onInterrupted: (error, retryInMs) => this.logger.warn({ err: error, retry_in_ms: retryInMs }, 'targets feed interrupted'),
      },
    );
  }

  private async openFeed(filter: string): Promise<ConsumerMessages> {
    const prefix = this.config.NATS_SUBJECT_PREFIX;
    const jetStream = await this.connect();
    await ensureEventStream(jetStream.jsm, prefix, this.config.RELAY_JETSTREAM_REPLICAS);
    const consumer = await jetStream.js.consumers.get(eventStreamName(prefix), { filter_subjects: filter, deliver_policy: DeliverPolicy.All });
    const messages = await consumer.consume();
    this.open.add(messages);
    if (this.stop.signal.aborted) {
      // Shutdown began while the consumer was being set up: close it, or its timers outlive the service.
      this.open.delete(messages);
      await messages.close().catch(() => undefined);
      throw new Error('the notifier is stopping');
    }
    return messages;
  }

  private async follow(messages: ConsumerMessages): Promise<void> {
    const agentSubject = prefixedSubject(this.config.NATS_SUBJECT_PREFIX, AGENT_UPDATED_EVENT_SUBJECT);
    // Push-config events read and not applied yet (the horizon stays below them until they are).
    const unapplied: PushConfigEvent[] = [];
    try {
      for await (const message of messages) {
        let payload: unknown;
        try {
          payload = message.json<unknown>();
        } catch {
          payload = null;
        }
        if (message.subject === agentSubject) {
          if (isAgentEvent(payload)) this.targets.rememberEvent(payload);
          continue;
        }
        if (isPushConfigEvent(payload)) unapplied.push(payload);
        // While the stream holds more, read on (up to a batch) and apply them together.
        if (message.info.pending > 0 && unapplied.length < CATCH_UP_BATCH) continue;
        await this.pushTargets.rememberEvents(unapplied.splice(0));
        this.pushConfigHorizon.applied(message.seq, message.info.pending);
      }
    } finally {
      this.open.delete(messages);
      await messages.close().catch(() => undefined);
    }
  }

  /** The stream sequence of the first push-config event at or after `from`, or null when the stream holds none there yet. */
  private async nextPushConfigEvent(from: number): Promise<number | null> {
    const prefix = this.config.NATS_SUBJECT_PREFIX;
    const jetStream = await this.connect();
    const query: NextMsgRequest = { seq: from, next_by_subj: prefixedSubject(prefix, PUSH_CONFIG_EVENTS_FILTER) };
    // The manager's type leaves out the `next_by_subj` that the server's message get takes (NATS 2.9+); it sends the query as it is.
    const message = await jetStream.jsm.streams.getMessage(eventStreamName(prefix), query as unknown as MsgRequest);
    return message?.seq ?? null;
  }

  private async connect(): Promise<JetStreamContext> {
    if (this.jetStream && !this.jetStream.connection.isClosed()) return this.jetStream;
    this.opening ??= openJetStream({
      url: this.config.natsServers,
      name: 'agentrelay-notifier-targets',
      inboxPrefix: natsInboxPrefix('notifier', this.config.NATS_SUBJECT_PREFIX),
    }).finally(() => (this.opening = null));
    const jetStream = await this.opening;
    if (this.stop.signal.aborted) {
      await jetStream.connection.drain().catch(() => undefined);
      throw new Error('the notifier is stopping');
    }
    this.jetStream = jetStream;
    return jetStream;
  }
}
