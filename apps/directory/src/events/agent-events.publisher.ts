import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import {
  AGENT_UPDATED_EVENT_SUBJECT,
  DIRECTORY_CHANGES_SUBJECT,
  prefixedSubject,
  relayEventCloudEventHeaders,
  type AgentUpdatedEvent,
  type DirectoryChange,
} from '@app/contracts';
import { ensureEventStream, type JetStreamContext, natsInboxPrefix, openJetStream, publishWithMsgId } from '@app/messaging';
import type { AgentEntity } from '../agents/agent.entity';
import { DirectoryConfig } from '../directory.config';
import { OutboxEventEntity } from './outbox-event.entity';

/** How often the relay looks for events a failed or crashed publish left behind (every commit flushes at once). */
const SWEEP_INTERVAL_MS = 10_000;
const BATCH_SIZE = 100;

export function agentUpdatedEvent(agent: AgentEntity, occurredAt: Date = new Date()): AgentUpdatedEvent {
  return {
    event_id: randomUUID(),
    agent_id: agent.id,
    handle: agent.handle,
    name: agent.name,
    notification_webhook_url: agent.notificationWebhookUrl,
    slack_webhook_url: agent.slackWebhookUrl,
    webhook_timeout_ms: agent.webhookTimeoutMs,
    upstream: agent.upstream ?? null,
    disabled: agent.disabledAt !== null,
    occurred_at: occurredAt.toISOString(),
  };
}

/**
 * Agent events through a transactional outbox: `record` writes `relay.events.agent.updated` in the
 * transaction of the change; `flush` (after each commit, and on a timer) relays unpublished events
 * to JetStream with `Nats-Msg-Id` = event id, so a crash neither loses nor duplicates one.
 */
@Injectable()
export class AgentEventsPublisher implements OnModuleInit, OnModuleDestroy, OnApplicationShutdown {
  private readonly logger = new Logger(AgentEventsPublisher.name);
  private context?: JetStreamContext;
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private flushAgain = false;

  constructor(
    @Inject(DirectoryConfig) private readonly config: DirectoryConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  async onModuleInit(): Promise<void> {
    this.context = await openJetStream({
      url: this.config.natsServers,
      name: 'agentrelay-directory-events',
      inboxPrefix: natsInboxPrefix('directory', this.config.NATS_SUBJECT_PREFIX),
    });
    await ensureEventStream(this.context.jsm, this.config.NATS_SUBJECT_PREFIX, this.config.RELAY_JETSTREAM_REPLICAS);
    this.timer = setInterval(() => void this.flush(), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stops the sweep and lets a running flush finish while the database is still open. */
  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flushing?.catch(() => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.onModuleDestroy();
    const connection = this.context?.connection;
    this.context = undefined;
    if (connection && !connection.isClosed()) await connection.drain();
  }

  /** Writes the agent's current delivery profile as an event, inside the caller's transaction. */
  async record(manager: EntityManager, agent: AgentEntity): Promise<void> {
    const event = agentUpdatedEvent(agent);
    await manager.query(`INSERT INTO "directory"."outbox_events" ("id", "subject", "payload") VALUES ($1, $2, $3)`, [
      event.event_id,
      AGENT_UPDATED_EVENT_SUBJECT,
      JSON.stringify(event),
    ]);
  }

  /**
   * Tells every edge, after the commit, that identities, keys or trust decisions they cached may be
   * stale. Best effort: a lost notice is bounded by the edges' cache lifetime.
   */
  announceChange(change: DirectoryChange): void {
    const connection = this.context?.connection;
    if (!connection || connection.isClosed()) return;
    connection.publish(prefixedSubject(this.config.NATS_SUBJECT_PREFIX, DIRECTORY_CHANGES_SUBJECT), JSON.stringify(change));
  }

  /** Relays every unpublished event, oldest first; one flush at a time per process. */
  flush(): Promise<void> {
    if (this.flushing) {
      this.flushAgain = true;
      return this.flushing;
    }
    this.flushing = (async () => {
      try {
        do {
          this.flushAgain = false;
          while ((await this.publishBatch()) === BATCH_SIZE);
        } while (this.flushAgain);
      } catch (error) {
        this.logger.warn({ err: error }, 'agent events not relayed yet; retrying on the next sweep');
      } finally {
        this.flushing = undefined;
      }
    })();
    return this.flushing;
  }

  private async publishBatch(): Promise<number> {
    const context = this.context;
    if (!context) return 0;
    return this.dataSource.transaction(async (manager) => {
      const events = await manager
        .getRepository(OutboxEventEntity)
        .createQueryBuilder('event')
        .where('event.published_at IS NULL')
        .orderBy('event.position', 'ASC')
        .limit(BATCH_SIZE)
        .setLock('pessimistic_write')
        .setOnLocked('skip_locked')
        .getMany();
      for (const event of events) {
        await publishWithMsgId(
          context.js,
          prefixedSubject(this.config.NATS_SUBJECT_PREFIX, event.subject),
          event.payload,
          event.id,
          undefined,
          null,
          relayEventCloudEventHeaders(event.subject, event.payload, this.config.RELAY_PUBLIC_URL),
        );
        await manager.getRepository(OutboxEventEntity).update({ id: event.id }, { publishedAt: new Date() });
      }
      return events.length;
    });
  }
}
