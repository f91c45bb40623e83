import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { In, type DataSource } from 'typeorm';
import type { AgentUpdatedEvent } from '@app/contracts';
import type { AgentTarget } from '../deliveries/delivery-planner';
import { AgentTargetEntity } from './agent-target.entity';

/**
 * The notifier's copy of where each agent wants to be told, kept from the directory's
 * `relay.events.agent.updated` events. An event older than the stored one is ignored, so a
 * redelivered or late event never rolls a target back.
 */
@Injectable()
export class AgentTargetsService {
  private readonly logger = new Logger(AgentTargetsService.name);

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async apply(event: AgentUpdatedEvent): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      // A handle now held by another agent id (re-registered) moves to the newer agent.
      await manager.query(`DELETE FROM "notifier"."agent_targets" WHERE "handle" = $1 AND "agent_id" <> $2 AND "occurred_at" <= $3`, [
        event.handle,
        event.agent_id,
        event.occurred_at,
      ]);
      const rows = (await manager.query(
        `INSERT INTO "notifier"."agent_targets"
           ("agent_id", "handle", "name", "notification_webhook_url", "slack_webhook_url", "disabled", "source_event_id", "occurred_at", "updated_at")
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())
         ON CONFLICT ("agent_id") DO UPDATE SET
           "handle" = EXCLUDED."handle", "name" = EXCLUDED."name",
           "notification_webhook_url" = EXCLUDED."notification_webhook_url", "slack_webhook_url" = EXCLUDED."slack_webhook_url",
           "disabled" = EXCLUDED."disabled", "source_event_id" = EXCLUDED."source_event_id",
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
        ],
      )) as unknown[];
      if (rows.length === 0) this.logger.debug({ agent_id: event.agent_id, event_id: event.event_id }, 'ignored an agent event older than the stored target');
      return rows.length > 0;
    });
  }

  async byHandles(handles: string[]): Promise<Map<string, AgentTarget>> {
    const rows = await this.dataSource.getRepository(AgentTargetEntity).find({
      select: { handle: true, name: true, notificationWebhookUrl: true, slackWebhookUrl: true, disabled: true },
      where: { handle: In(handles) },
    });
    return new Map(
      rows.map((row): [string, AgentTarget] => [
        row.handle,
        { handle: row.handle, name: row.name, notification_webhook_url: row.notificationWebhookUrl, slack_webhook_url: row.slackWebhookUrl, disabled: row.disabled },
      ]),
    );
  }
}
