import type { Provider } from '@nestjs/common';
import { NatsRpcClient } from '@app/messaging';
import { EdgeConfig } from '../edge.config';

export const natsRpcClientProvider: Provider = {
  provide: NatsRpcClient,
  inject: [EdgeConfig],
  useFactory: (config: EdgeConfig) =>
    NatsRpcClient.connect({
      url: config.NATS_URL,
      subjectPrefix: config.NATS_SUBJECT_PREFIX,
      defaultTimeoutMs: config.NATS_REQUEST_TIMEOUT_MS,
      name: 'agentrelay-edge',
    }),
};
