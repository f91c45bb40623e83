import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { PUSH_CONFIG_SUBJECTS, type PushConfigEvent } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { SecretCipher, SecretDecryptionError, type SealedColumn } from '@app/secrets';
import type { PushTarget } from '../deliveries/push-payload';
import { PushTargetEntity } from './push-target.entity';

/** The token and credentials of each copy are stored sealed (AES-256-GCM under RELAY_SECRET_KEYS). */
export const PUSH_TARGET_SEALED_COLUMNS: SealedColumn[] = [
  { table: '"notifier"."push_targets"', keyColumns: ['task_id', 'owner_handle', 'config_id'], column: 'token', kind: 'text' },
  { table: '"notifier"."push_targets"', keyColumns: ['task_id', 'owner_handle', 'config_id'], column: 'auth_credentials', kind: 'text' },
];

/**
 * The A2A push-notification configs of each task, as the tasks service's events last said. The
 * events name the config without its secrets; the config itself (token and credentials included)
 * is asked from the tasks service.
 */
@Injectable()
export class PushTargetsService {
  private readonly logger = new Logger(PushTargetsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
  ) {}

  async apply(event: PushConfigEvent): Promise<void> {
    const { target } =
      event.deleted || !event.url ? { target: null } : await this.rpc.request(PUSH_CONFIG_SUBJECTS.target, { task_id: event.task_id, owner: event.owner, config_id: event.config_id });
    if (!target) {
      await this.dataSource.query(`DELETE FROM "notifier"."push_targets" WHERE "task_id" = $1 AND "owner_handle" = $2 AND "config_id" = $3 AND "occurred_at" <= $4`, [
        event.task_id,
        event.owner,
        event.config_id,
        event.occurred_at,
      ]);
      return;
    }
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
        target.version,
        target.url,
        this.cipher.sealNullable(target.token),
        target.authentication?.schemes[0] ?? null,
        this.cipher.sealNullable(target.authentication?.credentials ?? null),
        event.occurred_at,
      ],
    );
  }

  async ofTask(taskId: string): Promise<PushTarget[]> {
    const rows = await this.dataSource.getRepository(PushTargetEntity).find({ where: { taskId }, order: { createdAt: 'ASC', ownerHandle: 'ASC', configId: 'ASC' } });
    const targets: PushTarget[] = [];
    for (const row of rows) {
      try {
        targets.push({
          config_id: row.configId,
          owner_handle: row.ownerHandle,
          version: row.version,
          url: row.url,
          token: this.cipher.openNullable(row.token),
          auth_scheme: row.authScheme,
          auth_credentials: this.cipher.openNullable(row.authCredentials),
        });
      } catch (error) {
        // One config sealed with a key no longer listed must not hold up the task's other deliveries.
        if (!(error instanceof SecretDecryptionError)) throw error;
        this.logger.error({ task_id: taskId, config_id: row.configId, owner: row.ownerHandle, reason: error.message }, 'push config cannot be opened: not notified');
      }
    }
    return targets;
  }
}
