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

/** Config ids are chosen by each owner: a config is one owner's id on one task. */
function keyOf(target: Pick<PushTarget, 'owner_handle' | 'config_id'>): string {
  return `${target.owner_handle}\u0000${target.config_id}`;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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
  /** Task id → (owner, config id) → config. */
  private readonly byTask = new Map<string, Map<string, KnownPushTarget>>();
  private seq = 0;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async onModuleInit(): Promise<void> {
    const rows = (await this.dataSource.query(`SELECT * FROM "notifier"."push_targets" ORDER BY "created_at", "owner_handle", "config_id"`)) as PushTargetRow[];
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
      const key = keyOf({ owner_handle: event.owner, config_id: event.config_id });
      const held = configs?.get(key);
      if (configs && held && held.occurredAt <= occurredAt) {
        configs.delete(key);
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
      await this.dataSource.query(`DELETE FROM "notifier"."push_targets" WHERE "task_id" = $1 AND "owner_handle" = $2 AND "config_id" = $3 AND "occurred_at" <= $4`, [
        event.task_id,
        event.owner,
        event.config_id,
        event.occurred_at,
      ]);
    } else {
      await this.dataSource.query(
        `INSERT INTO "notifier"."push_targets" ("task_id", "config_id", "owner_handle", "version", "url", "token", "auth_scheme", "auth_credentials", "occurred_at")
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT ("task_id", "owner_handle", "config_id") DO UPDATE SET
           "version" = EXCLUDED."version", "url" = EXCLUDED."url", "token" = EXCLUDED."token",
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

  /** The task's configs, of every owner, in the order they were set. */
  ofTask(taskId: string): PushTarget[] {
    const configs = this.byTask.get(taskId);
    if (!configs) return [];
    return [...configs.values()].sort((a, b) => a.since - b.since || compareText(keyOf(a.target), keyOf(b.target))).map((known) => known.target);
  }

  private set(taskId: string, occurredAt: number, target: PushTarget): void {
    let configs = this.byTask.get(taskId);
    if (!configs) this.byTask.set(taskId, (configs = new Map()));
    const key = keyOf(target);
    const held = configs.get(key);
    if (held && held.occurredAt > occurredAt) return;
    configs.set(key, { occurredAt, since: held?.since ?? ++this.seq, target });
  }
}
