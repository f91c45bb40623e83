import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { natsInboxPrefix, NatsRpcClient } from '@app/messaging';
import { NotifierConfig } from '../notifier.config';

/** The notifier's one NATS request client to other services: agents from the directory, push configs' secrets from the tasks service. */
@Global()
@Module({})
export class MessagingModule implements OnApplicationShutdown {
  constructor(@Inject(NatsRpcClient) private readonly client: NatsRpcClient) {}

  static forRoot(config: NotifierConfig): DynamicModule {
    return {
      module: MessagingModule,
      providers: [
        {
          provide: NatsRpcClient,
          useFactory: () =>
            NatsRpcClient.connect({
              url: config.natsServers,
              inboxPrefix: natsInboxPrefix('notifier', config.NATS_SUBJECT_PREFIX),
              subjectPrefix: config.NATS_SUBJECT_PREFIX,
              defaultTimeoutMs: config.NATS_REQUEST_TIMEOUT_MS,
              name: 'agentrelay-notifier',
            }),
        },
      ],
      exports: [NatsRpcClient],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.drain();
  }
}
