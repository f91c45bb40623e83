import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { PushConfigEvent } from '@app/contracts';
import type { PushTarget } from '../deliveries/push-payload';
import { PushTargetEntity } from './push-target.entity';

/** The A2A push-notification configs of each task, as the tasks service's events last said. */
@Injectable()
export class PushTargetsService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async apply(event: PushConfigEvent): Promise<void> {
    if (event.deleted || !event.url) {
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
        event.version,
        event.url,
        event.token,
        event.authentication?.schemes[0] ?? null,
        event.authentication?.credentials ?? null,
        event.occurred_at,
      ],
    );
  }

  async ofTask(taskId: string): Promise<PushTarget[]> {
    const rows = await this.dataSource.getRepository(PushTargetEntity).find({ where: { taskId }, order: { createdAt: 'ASC', ownerHandle: 'ASC', configId: 'ASC' } });
    return rows.map((row) => ({
      config_id: row.configId,
      owner_handle: row.ownerHandle,
      version: row.version,
      url: row.url,
      token: row.token,
      auth_scheme: row.authScheme,
      auth_credentials: row.authCredentials,
    }));
  }
}
