import { Module, type DynamicModule } from '@nestjs/common';
import { Registry } from 'prom-client';
import { DELIVERY_CHANNELS } from '@app/contracts';
import { poolMetricsBinding, serviceTypeOrmRoot } from '@app/database';
import { defaultInstanceId, healthControllerFor, INSTANCE_ID } from '@app/messaging';
import { DeliveryMetrics, JetStreamConsumerMetrics, metricsProvider, OrgQuotaMetrics, serviceMetricsModule } from '@app/metrics';
import { NotifierUnsealer, SecretsModule } from '@app/secrets';
import { NotifierConfig } from './notifier.config';
import { ORG_APPROVAL_CHANNEL_SEALED_COLUMNS, OrgApprovalChannelsService } from './approvals/org-approval-channels.service';
import { notifierDataSourceOptions } from './database/data-source';
import { DELIVERY_SEALED_COLUMNS, DeliveriesService } from './deliveries/deliveries.service';
import { DeliveryAssertionSigner } from './deliveries/delivery-assertion';
import { DeliveryWorkerService } from './deliveries/delivery-worker.service';
import { SlackThrottleService } from './deliveries/slack-throttle.service';
import { EventConsumerService } from './events/event-consumer.service';
import { TargetsFeedService } from './events/targets-feed.service';
import { MessagingModule } from './messaging/messaging.module';
import { NotifierController } from './notifier.controller';
import { EventConsumersController } from './event-consumers/event-consumers.controller';
import { EventConsumersService } from './event-consumers/event-consumers.service';
import { SealedRequests } from './secrets/sealed-requests';
import { WEBHOOK_SECRET_SEALED_COLUMNS, WebhookSecretsService } from './secrets/webhook-secrets.service';
import { AgentTargetsService } from './targets/agent-targets.service';
import { DirectoryClient } from './targets/directory-client.service';
import { PUSH_TARGET_SEALED_COLUMNS, PushTargetsService } from './targets/push-targets.service';
import { UPSTREAM_CREDENTIAL_SEALED_COLUMNS, UpstreamCredentialsService } from './upstream/identity/upstream-credentials.service';
import { UpstreamClientsService } from './upstream/client/upstream-clients.service';
import { UpstreamDeliveryService } from './upstream/send/upstream-delivery.service';
import { UpstreamFollowerService } from './upstream/follow/upstream-follower.service';
import { UPSTREAM_REGISTRATION_SEALED_COLUMNS, UpstreamRegistrationsService } from './upstream/cards/upstream-registrations.service';
import { UpstreamResolverService } from './upstream/cards/upstream-resolver.service';
import { UpstreamCardsService } from './upstream/cards/upstream-cards.service';
import { UpstreamHealthService } from './upstream/health/upstream-health.service';
import { UpstreamMetrics } from './upstream/health/upstream-metrics';
import { UPSTREAM_TLS_SEALED_COLUMNS, UpstreamTlsService } from './upstream/identity/upstream-tls.service';

export const NOTIFIER_SEALED_COLUMNS = [
  ...WEBHOOK_SECRET_SEALED_COLUMNS,
  ...PUSH_TARGET_SEALED_COLUMNS,
  ...DELIVERY_SEALED_COLUMNS,
  ...UPSTREAM_CREDENTIAL_SEALED_COLUMNS,
  ...UPSTREAM_TLS_SEALED_COLUMNS,
  ...UPSTREAM_REGISTRATION_SEALED_COLUMNS,
  ...ORG_APPROVAL_CHANNEL_SEALED_COLUMNS,
];

@Module({})
export class NotifierModule {
  static forRoot(config: NotifierConfig): DynamicModule {
    return {
      module: NotifierModule,
      imports: [
        serviceTypeOrmRoot(notifierDataSourceOptions(config.DATABASE_URL, config.RELAY_DB_STATEMENT_TIMEOUT_MS), config.RELAY_MIGRATE_ON_START),
        serviceMetricsModule(config, [
          metricsProvider(JetStreamConsumerMetrics),
          { provide: DeliveryMetrics, inject: [Registry], useFactory: (registry: Registry) => new DeliveryMetrics(registry, DELIVERY_CHANNELS) },
          metricsProvider(UpstreamMetrics),
          metricsProvider(OrgQuotaMetrics),
        ]),
        SecretsModule.forRoot(config.RELAY_SECRET_KEYS, NOTIFIER_SEALED_COLUMNS),
        MessagingModule.forRoot(config),
      ],
      controllers: [healthControllerFor('notifier'), NotifierController, EventConsumersController],
      providers: [
        { provide: NotifierConfig, useValue: config },
        { provide: NotifierUnsealer, useValue: new NotifierUnsealer(config.RELAY_NOTIFIER_SEALING_KEYS) },
        {
          provide: DeliveryAssertionSigner,
          useValue: new DeliveryAssertionSigner(
            config.RELAY_ASSERTION_SIGNING_KEY,
            config.RELAY_PUBLIC_URL.replace(/\/+$/, ''),
            config.RELAY_ASSERTION_TTL_SECONDS,
          ),
        },
        SealedRequests,
        EventConsumersService,
        { provide: INSTANCE_ID, useValue: config.INSTANCE_ID || defaultInstanceId() },
        poolMetricsBinding(),
        DirectoryClient,
        AgentTargetsService,
        PushTargetsService,
        WebhookSecretsService,
        OrgApprovalChannelsService,
        DeliveriesService,
        SlackThrottleService,
        UpstreamTlsService,
        UpstreamHealthService,
        UpstreamCredentialsService,
        UpstreamCardsService,
        UpstreamResolverService,
        UpstreamRegistrationsService,
        UpstreamClientsService,
        UpstreamFollowerService,
        UpstreamDeliveryService,
        DeliveryWorkerService,
        TargetsFeedService,
        EventConsumerService,
      ],
    };
  }
}
