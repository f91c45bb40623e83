import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { PushConfigEvent, PushConfigVersion } from '@app/contracts';
import type { PushTarget } from '../deliveries/push-payload';

interface KnownPushTarget {
  occurredAt: number;
  /** When this replica first held it: configs are delivered to in the order they were set. */
  since: number;
  target: PushTarget;
}

interface PushTargetRow {
  task_id: string;
  config_id: string;
  owner_handle: string;
  version: PushConfigVersion;
  url: string;
  token: string | null;
  auth_scheme: string | null;
  auth_credentials: string | null;
  occurred_at: Date;
  created_at: Date;
}

/**
 * The A2A push-notification configs of each task, as the tasks service's events last said, kept
 * in memory: loaded from the notifier's table at start, then updated from the push-config events
 * (every replica sees every one, through its own feed). The table is written by the replica that
 * consumes each event and only seeds the memory.
 */
@Injectable()
export class PushTargetsService implements OnModuleInit {
  private readonly logger = new Logger(PushTargetsService.name);
  private readonly byTask = new Map<string, Map<string, KnownPushTarget>>();
  private seq = 0;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async onModuleInit(): Promise<void> {
    const rows = (await this.dataSource.query(`SELECT * FROM "notifier"."push_targets" ORDER BY "created_at", "config_id"`)) as PushTargetRow[];
    for (const row of rows) {
      this.set(row.task_id, new Date(row.occurred_at).getTime(), {
        config_id: row.config_id,
        owner_handle: row.owner_handle,
        version: row.version,
        url: row.url,
        token: row.token,
        auth_scheme: row.auth_scheme,
        auth_credentials: row.auth_credentials,
      });
    }
    this.logger.log({ tasks: this.byTask.size }, 'push targets loaded');
  }

  /** Applies a push-config event to memory only (the per-replica feed). */
  rememberEvent(event: PushConfigEvent): void {
    const occurredAt = Date.parse(event.occurred_at);
    if (event.deleted || !event.url) {
      const configs = this.byTask.get(event.task_id);
      const held = configs?.get(event.config_id);
      if (configs && held && held.occurredAt <= occurredAt) {
        configs.delete(event.config_id);
        if (configs.size === 0) this.byTask.delete(event.task_id);
      }
      return;
    }
    this.set(event.task_id, occurredAt, {
      config_id: event.config_id,
      owner_handle: event.owner,
      version: event.version,
      url: event.url,
      token: event.token,
      auth_scheme: event.authentication?.schemes[0] ?? null,
      auth_credentials: event.authentication?.credentials ?? null,
    });
  }

  /** Applies a push-config event to the table (the durable consumer) and to memory. */
  async apply(event: PushConfigEvent): Promise<void> {
    if (event.deleted || !event.url) {
      await this.dataSource.query(`DELETE FROM "notifier"."push_targets" WHERE "task_id" = $1 AND "config_id" = $2 AND "occurred_at" <= $3`, [
        event.task_id,
        event.config_id,
        event.occurred_at,
      ]);
    } else {
      await this.dataSource.query(
        `INSERT INTO "notifier"."push_targets" ("task_id", "config_id", "owner_handle", "version", "url", "token", "auth_scheme", "auth_credentials", "occurred_at")
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT ("task_id", "config_id") DO UPDATE SET
           "owner_handle" = EXCLUDED."owner_handle", "version" = EXCLUDED."version", "url" = EXCLUDED."url", "token" = EXCLUDED."token",
           "auth_scheme" = EXCLUDED."auth_scheme", "auth_credentials" = EXCLUDED."auth_credentials", "occurred_at" = EXCLUDED."occurred_at"
         WHERE "push_targets"."occurred_at" <= EXCLUDED."occurred_at"`,
        [
          event.task_id,
          event.config_id,
          event.owner,
          event.version,
          event.url,
          event.token,
          event.authentication?.schemes[0] ?? null,
          event.authentication?.credentials ?? null,
          event.occurred_at,
        ],
      );
    }
    this.rememberEvent(event);
  }

  ofTask(taskId: string): PushTarget[] {
    const configs = this.byTask.get(taskId);
    if (!configs) return [];
    return [...configs.values()]
      .sort((a, b) => a.since - b.since || (a.target.config_id < b.target.config_id ? -1 : a.target.config_id > b.target.config_id ? 1 : 0))
      .map((known) => known.target);
  }

  private set(taskId: string, occurredAt: number, target: PushTarget): void {
    let configs = this.byTask.get(taskId);
    if (!configs) this.byTask.set(taskId, (configs = new Map()));
    const held = configs.get(target.config_id);
    if (held && held.occurredAt > occurredAt) return;
    configs.set(target.config_id, { occurredAt, since: held?.since ?? ++this.seq, target });
  }
}
