import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { NatsRpcClient } from '@app/messaging';
import { natsRpcClientProvider } from './nats-rpc.provider';

@Global()
@Module({ providers: [natsRpcClientProvider], exports: [NatsRpcClient] })
export class ServiceRpcModule implements OnApplicationShutdown {
  constructor(@Inject(NatsRpcClient) private readonly client: NatsRpcClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client.drain();
  }
}
