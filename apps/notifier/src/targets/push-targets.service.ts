import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { PUSH_CONFIG_SUBJECTS, type PushConfigEvent, type WireVersion, type PushTargetReply } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { NotifierUnsealer, SecretCipher, SecretDecryptionError, type SealedColumn } from '@app/secrets';
import type { PushTarget } from './delivery-targets';

/** The token and credentials of each copy are stored sealed (AES-256-GCM under RELAY_SECRET_KEYS). */
export const PUSH_TARGET_SEALED_COLUMNS: SealedColumn[] = [
  { table: '"notifier"."push_targets"', keyColumns: ['task_id', 'owner_handle', 'config_id'], column: 'token', kind: 'text' },
  { table: '"notifier"."push_targets"', keyColumns: ['task_id', 'owner_handle', 'config_id'], column: 'auth_credentials', kind: 'text' },
];

/** How many configs a replica catching up on the stream fetches from the tasks service at once. */
const CATCH_UP_FETCHES = 8;

/** A push target whose `token` and `auth_credentials` are still sealed. */
type SealedPushTarget = PushTarget;

interface KnownPushTarget {
  occurredAt: number;
  /** When the config was first set (the tasks service's clock): events before it are not its business. */
  setAt: number;
  /** When this replica first held it: configs are delivered to in the order they were set. */
  since: number;
  target: SealedPushTarget;
}

interface PushTargetRow {
  task_id: string;
  config_id: string;
  owner_handle: string;
  version: WireVersion;
  url: string;
  token: string | null;
  auth_scheme: string | null;
  auth_credentials: string | null;
  occurred_at: Date;
  created_at: Date;
}

interface FetchedTarget {
  version: NonNullable<PushTargetReply['target']>['version'];
  url: string;
  token: string | null;
  authentication: { schemes: string[]; credentials: string | null } | null;
}

/** Config ids are chosen by each owner: a config is one owner's id on one task. */
function keyOf(target: Pick<PushTarget, 'owner_handle' | 'config_id'>): string {
  return `${target.owner_handle}\u0000${target.config_id}`;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function fromRow(row: PushTargetRow): SealedPushTarget {
  return {
    config_id: row.config_id,
    owner_handle: row.owner_handle,
    version: row.version,
    url: row.url,
    token: row.token,
    auth_scheme: row.auth_scheme,
    auth_credentials: row.auth_credentials,
  };
}

/**
 * The A2A push-notification configs of each task, as the tasks service's events last said, kept
 * in memory with their token and credentials sealed: loaded from the notifier's table at start,
 * then updated from the push-config events (every replica sees every one, through its own feed).
 * The events name a config without its secrets; the config itself is asked from the tasks
 * service. The table is written by the replica that consumes each event and seeds the memory.
 * Secrets are opened only where a delivery is built (`ofTask`).
 */
@Injectable()
export class PushTargetsService implements OnModuleInit {
  private readonly logger = new Logger(PushTargetsService.name);
  /** Task id → (owner, config id) → config. */
  private readonly byTask = new Map<string, Map<string, KnownPushTarget>>();
  private seq = 0;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
    @Inject(NotifierUnsealer) private readonly unsealer: NotifierUnsealer,
  ) {}

  async onModuleInit(): Promise<void> {
    const rows = (await this.dataSource.query(`SELECT * FROM "notifier"."push_targets" ORDER BY "created_at", "owner_handle", "config_id"`)) as PushTargetRow[];
    for (const row of rows) this.set(row.task_id, new Date(row.occurred_at).getTime(), fromRow(row));
    this.logger.log({ tasks: this.byTask.size }, 'push targets loaded');
  }

  /**
   * Applies a push-config event to memory only (the per-replica feed). A config this replica does
   * not hold as new as the event is asked from the tasks service, or, when that does not answer,
   * read from the copy the consuming replica stored.
   */
  /**
   * Applies a run of push-config events read in stream order, as `rememberEvent` one by one
   * would: only each config's last event counts (a config's event always fetches its current
   * state, so an earlier one of the same config adds nothing), and the configs are fetched
   * `CATCH_UP_FETCHES` at a time. A replica catching up on the stream after a start reads
   * thousands of events this way instead of waiting on one fetch after another.
   */
  async rememberEvents(events: readonly PushConfigEvent[]): Promise<void> {
    const lastOfEach = new Map<string, PushConfigEvent>();
    for (const event of events) {
      const key = `${event.task_id}\u0000${keyOf({ owner_handle: event.owner, config_id: event.config_id })}`;
      lastOfEach.delete(key);
      lastOfEach.set(key, event);
    }
    const pending = [...lastOfEach.values()];
    const work = async (): Promise<void> => {
      for (let event = pending.shift(); event; event = pending.shift()) await this.rememberEvent(event);
    };
    await Promise.all(Array.from({ length: Math.min(CATCH_UP_FETCHES, pending.length) }, work));
  }

  async rememberEvent(event: PushConfigEvent): Promise<void> {
    const occurredAt = Date.parse(event.occurred_at);
    if (event.deleted || !event.url) {
      this.forget(event, occurredAt);
      return;
    }
    const held = this.byTask.get(event.task_id)?.get(keyOf({ owner_handle: event.owner, config_id: event.config_id }));
    if (held && held.occurredAt >= occurredAt) return;
    try {
      const target = await this.fetch(event);
      // Deleted since: its deletion event follows.
      if (target) this.set(event.task_id, occurredAt, this.sealed(event, target));
    } catch (error) {
      this.logger.warn(
        { err: error, task_id: event.task_id, config_id: event.config_id, owner: event.owner },
        'push config not fetched; using the stored copy',
      );
      const [row] = (await this.dataSource.query(`SELECT * FROM "notifier"."push_targets" WHERE "task_id" = $1 AND "owner_handle" = $2 AND "config_id" = $3`, [
        event.task_id,
        event.owner,
        event.config_id,
      ])) as PushTargetRow[];
      if (row) this.set(row.task_id, new Date(row.occurred_at).getTime(), fromRow(row));
    }
  }

  /**
   * Applies a push-config event to the table (the durable consumer) and to memory: the config is
   * fetched from the tasks service and a sealed copy kept. Throws when the tasks service does not
   * answer (the event is redelivered).
   */
  async apply(event: PushConfigEvent): Promise<void> {
    const occurredAt = Date.parse(event.occurred_at);
    const target = event.deleted || !event.url ? null : await this.fetch(event);
    if (!target) {
      await this.dataSource.query(
        `DELETE FROM "notifier"."push_targets" WHERE "task_id" = $1 AND "owner_handle" = $2 AND "config_id" = $3 AND "occurred_at" <= $4`,
        [event.task_id, event.owner, event.config_id, event.occurred_at],
      );
      this.forget(event, occurredAt);
      return;
    }
    const sealed = this.sealed(event, target);
    await this.dataSource.query(
      `INSERT INTO "notifier"."push_targets" ("task_id", "config_id", "owner_handle", "version", "url", "token", "auth_scheme", "auth_credentials", "occurred_at")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT ("task_id", "owner_handle", "config_id") DO UPDATE SET
         "version" = EXCLUDED."version", "url" = EXCLUDED."url", "token" = EXCLUDED."token",
         "auth_scheme" = EXCLUDED."auth_scheme", "auth_credentials" = EXCLUDED."auth_credentials", "occurred_at" = EXCLUDED."occurred_at"
       WHERE "push_targets"."occurred_at" <= EXCLUDED."occurred_at"`,
      [event.task_id, event.config_id, event.owner, sealed.version, sealed.url, sealed.token, sealed.auth_scheme, sealed.auth_credentials, event.occurred_at],
    );
    this.set(event.task_id, occurredAt, sealed);
  }

  /**
   * The task's configs, of every owner, in the order they were set, with their secrets opened. One
   * config sealed with a key no longer listed is skipped rather than holding up the others.
   */
  ofTask(taskId: string, eventAt = Number.POSITIVE_INFINITY): PushTarget[] {
    const configs = this.byTask.get(taskId);
    if (!configs) return [];
    const targets: PushTarget[] = [];
    const ordered = [...configs.values()]
      .filter((known) => known.setAt <= eventAt)
      .sort((a, b) => a.since - b.since || compareText(keyOf(a.target), keyOf(b.target)));
    for (const { target } of ordered) {
      try {
        targets.push({ ...target, token: this.cipher.openNullable(target.token), auth_credentials: this.cipher.openNullable(target.auth_credentials) });
      } catch (error) {
        if (!(error instanceof SecretDecryptionError)) throw error;
        this.logger.error(
          { task_id: taskId, config_id: target.config_id, owner: target.owner_handle, reason: error.message },
          'push config cannot be opened: not notified',
        );
      }
    }
    return targets;
  }

  /** The config from the tasks service, its token and credentials opened with the notifier's key. */
  private async fetch(event: PushConfigEvent): Promise<FetchedTarget | null> {
    const { target } = await this.rpc.request(PUSH_CONFIG_SUBJECTS.target, { task_id: event.task_id, owner: event.owner, config_id: event.config_id });
    if (!target) return null;
    const open = (sealed: string | null): Promise<string | null> => (sealed === null ? Promise.resolve(null) : this.unsealer.open(sealed));
    return {
      version: target.version,
      url: target.url,
      token: await open(target.sealed_token),
      authentication: target.authentication
        ? { schemes: target.authentication.schemes, credentials: await open(target.authentication.sealed_credentials) }
        : null,
    };
  }

  private sealed(event: PushConfigEvent, target: FetchedTarget): SealedPushTarget {
    return {
      config_id: event.config_id,
      owner_handle: event.owner,
      version: target.version,
      url: target.url,
      token: this.cipher.sealNullable(target.token),
      auth_scheme: target.authentication?.schemes[0] ?? null,
      auth_credentials: this.cipher.sealNullable(target.authentication?.credentials ?? null),
    };
  }

  private forget(event: PushConfigEvent, occurredAt: number): void {
    const configs = this.byTask.get(event.task_id);
    const key = keyOf({ owner_handle: event.owner, config_id: event.config_id });
    const held = configs?.get(key);
    if (configs && held && held.occurredAt <= occurredAt) {
      configs.delete(key);
      if (configs.size === 0) this.byTask.delete(event.task_id);
    }
  }

  private set(taskId: string, occurredAt: number, target: SealedPushTarget): void {
    let configs = this.byTask.get(taskId);
    if (!configs) this.byTask.set(taskId, (configs = new Map()));
    const key = keyOf(target);
    const held = configs.get(key);
    if (held && held.occurredAt > occurredAt) return;
    configs.set(key, { occurredAt, setAt: held?.setAt ?? occurredAt, since: held?.since ?? ++this.seq, target });
  }
}
