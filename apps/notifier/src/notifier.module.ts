import { Module, type DynamicModule } from '@nestjs/common';
import { defaultInstanceId, healthControllerFor, INSTANCE_ID, serviceTypeOrmRoot } from '@app/database';
import { SecretsModule } from '@app/secrets';
import { NotifierConfig } from './notifier.config';
import { notifierDataSourceOptions } from './database/data-source';
import { DELIVERY_SEALED_COLUMNS, DeliveriesService } from './deliveries/deliveries.service';
import { DeliveryWorkerService } from './deliveries/delivery-worker.service';
import { SlackThrottleService } from './deliveries/slack-throttle.service';
import { EventConsumerService } from './events/event-consumer.service';
import { MessagingModule } from './messaging/messaging.module';
import { NotifierController } from './notifier.controller';
import { WEBHOOK_SECRET_SEALED_COLUMNS, WebhookSecretsService } from './secrets/webhook-secrets.service';
import { AgentTargetsService } from './targets/agent-targets.service';
import { PUSH_TARGET_SEALED_COLUMNS, PushTargetsService } from './targets/push-targets.service';

export const NOTIFIER_SEALED_COLUMNS = [...WEBHOOK_SECRET_SEALED_COLUMNS, ...PUSH_TARGET_SEALED_COLUMNS, ...DELIVERY_SEALED_COLUMNS];

@Module({})
export class NotifierModule {
  static forRoot(config: NotifierConfig): DynamicModule {
    return {
      module: NotifierModule,
      imports: [
        serviceTypeOrmRoot(notifierDataSourceOptions(config.DATABASE_URL), config.RELAY_MIGRATE_ON_START),
        SecretsModule.forRoot(config.RELAY_SECRET_KEYS, NOTIFIER_SEALED_COLUMNS),
        MessagingModule.forRoot(config),
      ],
      controllers: [healthControllerFor('notifier'), NotifierController],
      providers: [
        { provide: NotifierConfig, useValue: config },
        { provide: INSTANCE_ID, useValue: config.INSTANCE_ID || defaultInstanceId() },
        AgentTargetsService,
        PushTargetsService,
        WebhookSecretsService,
        DeliveriesService,
        SlackThrottleService,
        DeliveryWorkerService,
        EventConsumerService,
      ],
    };
  }
}
