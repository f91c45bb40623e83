import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { AgentUpdatedEvent, UpstreamInterface } from '@app/contracts';
import type { AgentTarget } from './delivery-targets';
import { DirectoryClient } from './directory-client.service';

interface KnownTarget {
  agentId: string;
  occurredAt: number;
  target: AgentTarget;
}

interface AgentTargetRow {
  agent_id: string;
  handle: string;
  name: string;
  notification_webhook_url: string | null;
  slack_webhook_url: string | null;
  webhook_timeout_ms: number | null;
  upstream: UpstreamInterface | null;
  disabled: boolean;
  occurred_at: Date;
}

/**
 * Where each agent wants to be told, kept in memory: loaded from the notifier's table at start,
 * then updated from the directory's `relay.events.agent.updated` events (every replica sees every
 * one, through its own feed) and, for an agent not heard of yet, looked up from the directory.
 * An event older than what is held is ignored, so a redelivered or late event never rolls a
 * target back. The table (written by the replica that consumes each event) only seeds the memory.
 */
@Injectable()
export class AgentTargetsService implements OnModuleInit {
  private readonly logger = new Logger(AgentTargetsService.name);
  private readonly byHandle = new Map<string, KnownTarget>();
  private readonly lookups = new Map<string, Promise<AgentTarget | null>>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(DirectoryClient) private readonly directory: DirectoryClient,
  ) {}

  async onModuleInit(): Promise<void> {
    const rows = (await this.dataSource.query(
      `SELECT "agent_id", "handle", "name", "notification_webhook_url", "slack_webhook_url", "webhook_timeout_ms", "upstream", "disabled", "occurred_at" FROM "notifier"."agent_targets"`,
    )) as AgentTargetRow[];
    for (const row of rows) {
      this.remember(row.agent_id, new Date(row.occurred_at).getTime(), {
        handle: row.handle,
        name: row.name,
        notification_webhook_url: row.notification_webhook_url,
        slack_webhook_url: row.slack_webhook_url,
        webhook_timeout_ms: row.webhook_timeout_ms,
        upstream: row.upstream,
        disabled: row.disabled,
      });
    }
    this.logger.log({ targets: this.byHandle.size }, 'agent targets loaded');
  }

  /** Applies an agent event to memory only (the per-replica feed). */
  rememberEvent(event: AgentUpdatedEvent): boolean {
    return this.remember(event.agent_id, Date.parse(event.occurred_at), {
      handle: event.handle,
      name: event.name,
      notification_webhook_url: event.notification_webhook_url,
      slack_webhook_url: event.slack_webhook_url,
      webhook_timeout_ms: event.webhook_timeout_ms ?? null,
      upstream: event.upstream ?? null,
      disabled: event.disabled,
    });
  }

  /** Applies an agent event to the table (the durable consumer) and to memory. */
  async apply(event: AgentUpdatedEvent): Promise<boolean> {
    const stored = await this.dataSource.transaction(async (manager) => {
      // A handle now held by another agent id (re-registered) moves to the newer agent.
      await manager.query(`DELETE FROM "notifier"."agent_targets" WHERE "handle" = $1 AND "agent_id" <> $2 AND "occurred_at" <= $3`, [
        event.handle,
        event.agent_id,
        event.occurred_at,
      ]);
      const rows = (await manager.query(
        `INSERT INTO "notifier"."agent_targets"
           ("agent_id", "handle", "name", "notification_webhook_url", "slack_webhook_url", "webhook_timeout_ms", "upstream", "disabled", "source_event_id", "occurred_at", "updated_at")
         VALUES ($1, $2, $3, $4, $5, $9, $10, $6, $7, $8, now())
         ON CONFLICT ("agent_id") DO UPDATE SET
           "handle" = EXCLUDED."handle", "name" = EXCLUDED."name",
           "notification_webhook_url" = EXCLUDED."notification_webhook_url", "slack_webhook_url" = EXCLUDED."slack_webhook_url",
           "webhook_timeout_ms" = EXCLUDED."webhook_timeout_ms", "upstream" = EXCLUDED."upstream", "disabled" = EXCLUDED."disabled", "source_event_id" = EXCLUDED."source_event_id",
           "occurred_at" = EXCLUDED."occurred_at", "updated_at" = now()
         WHERE "agent_targets"."occurred_at" <= EXCLUDED."occurred_at"
         RETURNING "agent_id"`,
        [
          event.agent_id,
          event.handle,
          event.name,
          event.notification_webhook_url,
          event.slack_webhook_url,
          event.disabled,
          event.event_id,
          event.occurred_at,
          event.webhook_timeout_ms ?? null,
          event.upstream ? JSON.stringify(event.upstream) : null,
        ],
      )) as unknown[];
      if (rows.length === 0) this.logger.debug({ agent_id: event.agent_id, event_id: event.event_id }, 'ignored an agent event older than the stored target');
      return rows.length > 0;
    });
    this.rememberEvent(event);
    return stored;
  }

  /**
   * The targets of these handles when every one is held in memory (no lookup, no promise: the path
   * of nearly every event), or null when one of them must be resolved.
   */
  held(handles: string[]): Map<string, AgentTarget> | null {
    const held = new Map<string, AgentTarget>();
    for (const handle of handles) {
      const known = this.byHandle.get(handle);
      if (!known) return null;
      held.set(handle, known.target);
    }
    return held;
  }

  /**
   * The targets of these handles. A handle not held in memory is looked up from the directory
   * (one request per handle, shared by concurrent callers); a handle the directory does not know
   * maps to null (a decision: nothing to deliver to it). Throws when the directory does not
   * answer, so the event is retried rather than acknowledged without its deliveries.
   */
  async resolve(handles: string[]): Promise<Map<string, AgentTarget | null>> {
    const resolved = new Map<string, AgentTarget | null>();
    const missing: string[] = [];
    for (const handle of handles) {
      const known = this.byHandle.get(handle);
      if (known) resolved.set(handle, known.target);
      else if (!resolved.has(handle)) missing.push(handle);
    }
    if (missing.length > 0) {
      const found = await Promise.all(missing.map((handle) => this.lookup(handle)));
      missing.forEach((handle, index) => resolved.set(handle, found[index]));
    }
    return resolved;
  }

  /** The agent with this handle as held (looked up from the directory when it is not): its id and target; null when the directory knows none. */
  async agent(handle: string): Promise<{ id: string; target: AgentTarget } | null> {
    if (!this.byHandle.has(handle)) await this.lookup(handle);
    const known = this.byHandle.get(handle);
    return known ? { id: known.agentId, target: known.target } : null;
  }

  private lookup(handle: string): Promise<AgentTarget | null> {
    let pending = this.lookups.get(handle);
    if (!pending) {
      pending = this.directory
        .agent(handle)
        .then((agent) => {
          if (!agent) {
            this.logger.warn({ handle }, 'a task event names an agent the directory does not know: nothing to deliver to it');
            return null;
          }
          // Its `updated_at` is no later than the `occurred_at` of the event of the same change.
          this.remember(agent.id, Date.parse(agent.updated_at), {
            handle: agent.handle,
            name: agent.name,
            notification_webhook_url: agent.notification_webhook_url,
            slack_webhook_url: agent.slack_webhook_url,
            webhook_timeout_ms: agent.webhook_timeout_ms ?? null,
            upstream: agent.upstream ?? null,
            disabled: agent.disabled,
          });
          this.logger.log({ handle }, 'looked up an agent not heard of yet from the directory');
          return this.byHandle.get(handle)?.target ?? null;
        })
        .finally(() => this.lookups.delete(handle));
      this.lookups.set(handle, pending);
    }
    return pending;
  }

  private remember(agentId: string, occurredAt: number, target: AgentTarget): boolean {
    const held = this.byHandle.get(target.handle);
    if (held && held.occurredAt > occurredAt) return false;
    this.byHandle.set(target.handle, { agentId, occurredAt, target });
    return true;
  }
}
