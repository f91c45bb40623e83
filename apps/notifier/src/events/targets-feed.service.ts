import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import { AGENT_UPDATED_EVENT_SUBJECT, prefixedSubject, PUSH_CONFIG_EVENTS } from '@app/contracts';
import { ensureEventStream, eventStreamName, openJetStream, type JetStreamContext } from '@app/messaging';
import { NotifierConfig } from '../notifier.config';
import { AgentTargetsService } from '../targets/agent-targets.service';
import { PushTargetsService } from '../targets/push-targets.service';
import { isAgentEvent, isPushConfigEvent } from './event-guards';

const MAX_BACKOFF_MS = 5000;
const PUSH_CONFIG_EVENTS_FILTER = PUSH_CONFIG_EVENTS.set.replace(/\.[^.]+$/, '.*');

/**
 * Every replica's own view of the agent and push-config events: an ordered (ephemeral, unacked)
 * consumer from the start of the stream that keeps this process's in-memory targets current,
 * whichever replica's durable consumer handles each event. Cheap: only these subjects, pushed.
 */
@Injectable()
export class TargetsFeedService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(TargetsFeedService.name);
  private jetStream: JetStreamContext | null = null;
  /** The connection being opened: both feeds share it (two opens at once would leave one undrained). */
  private opening: Promise<JetStreamContext> | null = null;
  private readonly open = new Set<ConsumerMessages>();
  private loops: Array<Promise<void>> = [];
  private stopping = false;
  private stopSleep: (() => void) | null = null;

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

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    this.stopSleep?.();
    await Promise.all([...this.open].map((messages) => messages.close().catch(() => undefined)));
    await Promise.all(this.loops);
    const jetStream = this.jetStream;
    this.jetStream = null;
    if (jetStream && !jetStream.connection.isClosed()) await jetStream.connection.drain().catch(() => undefined);
  }

  private async run(filter: string): Promise<void> {
    const prefix = this.config.NATS_SUBJECT_PREFIX;
    const agentSubject = prefixedSubject(prefix, AGENT_UPDATED_EVENT_SUBJECT);
    let backoffMs = 0;
    let messages: ConsumerMessages | null = null;
    while (!this.stopping) {
      try {
        const jetStream = await this.connect();
        await ensureEventStream(jetStream.jsm, prefix, this.config.RELAY_JETSTREAM_REPLICAS);
        const consumer = await jetStream.js.consumers.get(eventStreamName(prefix), { filter_subjects: filter, deliver_policy: DeliverPolicy.All });
        messages = await consumer.consume();
        this.open.add(messages);
        if (this.stopping) {
          // Shutdown began while the consumer was being set up: close it, or its timers outlive the service.
          await messages.close().catch(() => undefined);
          break;
        }
        backoffMs = 0;
        for await (const message of messages) {
          let payload: unknown;
          try {
            payload = message.json<unknown>();
          } catch {
            continue;
          }
          if (message.subject === agentSubject) {
            if (isAgentEvent(payload)) this.targets.rememberEvent(payload);
          } else if (isPushConfigEvent(payload)) {
            await this.pushTargets.rememberEvent(payload);
          }
        }
        if (!this.stopping) throw new Error('the ordered consumer ended');
      } catch (error) {
        if (messages) this.open.delete(messages);
        await messages?.close().catch(() => undefined);
        messages = null;
        if (this.stopping) break;
        backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs > 0 ? backoffMs * 2 : 100);
        this.logger.warn({ err: error, retry_in_ms: backoffMs }, 'targets feed interrupted');
        await this.sleep(backoffMs);
      }
    }
  }

  private async connect(): Promise<JetStreamContext> {
    if (this.jetStream && !this.jetStream.connection.isClosed()) return this.jetStream;
    this.opening ??= openJetStream({ url: this.config.NATS_URL, name: 'agentrelay-notifier-targets' }).finally(() => (this.opening = null));
    const jetStream = await this.opening;
    if (this.stopping) {
      await jetStream.connection.drain().catch(() => undefined);
      throw new Error('the notifier is stopping');
    }
    this.jetStream = jetStream;
    return jetStream;
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
