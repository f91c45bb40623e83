import { Module, type DynamicModule } from '@nestjs/common';
import { defaultInstanceId, healthControllerFor, INSTANCE_ID, serviceTypeOrmRoot } from '@app/database';
import { NotifierConfig } from './notifier.config';
import { notifierDataSourceOptions } from './database/data-source';
import { DeliveriesService } from './deliveries/deliveries.service';
import { DeliveryWorkerService } from './deliveries/delivery-worker.service';
import { SlackThrottleService } from './deliveries/slack-throttle.service';
import { EventConsumerService } from './events/event-consumer.service';
import { TargetsFeedService } from './events/targets-feed.service';
import { NotifierController } from './notifier.controller';
import { WebhookSecretsService } from './secrets/webhook-secrets.service';
import { AgentTargetsService } from './targets/agent-targets.service';
import { DirectoryClient } from './targets/directory-client.service';
import { PushTargetsService } from './targets/push-targets.service';

@Module({})
export class NotifierModule {
  static forRoot(config: NotifierConfig): DynamicModule {
    return {
      module: NotifierModule,
      imports: [serviceTypeOrmRoot(notifierDataSourceOptions(config.DATABASE_URL), config.RELAY_MIGRATE_ON_START)],
      controllers: [healthControllerFor('notifier'), NotifierController],
      providers: [
        { provide: NotifierConfig, useValue: config },
        { provide: INSTANCE_ID, useValue: config.INSTANCE_ID || defaultInstanceId() },
        DirectoryClient,
        AgentTargetsService,
        PushTargetsService,
        WebhookSecretsService,
        DeliveriesService,
        SlackThrottleService,
        DeliveryWorkerService,
        TargetsFeedService,
        EventConsumerService,
      ],
    };
  }
}
