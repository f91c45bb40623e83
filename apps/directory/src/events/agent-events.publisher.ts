import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AGENT_UPDATED_EVENT_SUBJECT, prefixedSubject, type AgentUpdatedEvent } from '@app/contracts';
import { ensureEventStream, openJetStream, publishWithMsgId, type JetStreamContext } from '@app/messaging';
import type { AgentEntity } from '../agents/agent.entity';
import { DirectoryConfig } from '../directory.config';

const PUBLISH_ATTEMPTS = 3;

export function agentUpdatedEvent(agent: AgentEntity, occurredAt: Date = new Date()): AgentUpdatedEvent {
  return {
    event_id: randomUUID(),
    agent_id: agent.id,
    handle: agent.handle,
    name: agent.name,
    notification_webhook_url: agent.notificationWebhookUrl,
    slack_webhook_url: agent.slackWebhookUrl,
    disabled: agent.disabledAt !== null,
    occurred_at: occurredAt.toISOString(),
  };
}

/**
 * Publishes `relay.events.agent.updated` to JetStream after every agent create, update or disable,
 * with `Nats-Msg-Id` = event id, so the notifier learns each agent's delivery targets.
 */
@Injectable()
export class AgentEventsPublisher implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(AgentEventsPublisher.name);
  private context?: JetStreamContext;

  constructor(@Inject(DirectoryConfig) private readonly config: DirectoryConfig) {}

  async onModuleInit(): Promise<void> {
    this.context = await openJetStream({ url: this.config.NATS_URL, name: 'agentrelay-directory-events' });
    await ensureEventStream(this.context.jsm, this.config.NATS_SUBJECT_PREFIX);
  }

  async onApplicationShutdown(): Promise<void> {
    const connection = this.context?.connection;
    this.context = undefined;
    if (connection && !connection.isClosed()) await connection.drain();
  }

  /** Publishes the agent's current delivery profile; retries a few times, then logs the loss. */
  async agentChanged(agent: AgentEntity): Promise<void> {
    const event = agentUpdatedEvent(agent);
    const subject = prefixedSubject(this.config.NATS_SUBJECT_PREFIX, AGENT_UPDATED_EVENT_SUBJECT);
    let lastError: unknown;
    for (let attempt = 1; attempt <= PUBLISH_ATTEMPTS; attempt++) {
      const context = this.context;
      if (!context) break;
      try {
        await publishWithMsgId(context.js, subject, event, event.event_id);
        return;
      } catch (error) {
        lastError = error;
      }
    }
    this.logger.error({ err: lastError, event_id: event.event_id, handle: agent.handle }, 'could not publish agent event');
  }
}
