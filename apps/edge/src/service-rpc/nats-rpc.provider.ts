import type { Provider } from '@nestjs/common';
import { natsInboxPrefix, NatsRpcClient } from '@app/messaging';
import { NatsClientMetrics } from '@app/metrics';
import { EdgeConfig } from '../edge.config';

export const natsRpcClientProvider: Provider = {
  provide: NatsRpcClient,
  inject: [EdgeConfig, NatsClientMetrics],
  useFactory: (config: EdgeConfig, metrics: NatsClientMetrics) =>
    NatsRpcClient.connect({
      url: config.natsServers,
      inboxPrefix: natsInboxPrefix('edge', config.NATS_SUBJECT_PREFIX),
      subjectPrefix: config.NATS_SUBJECT_PREFIX,
      defaultTimeoutMs: config.NATS_REQUEST_TIMEOUT_MS,
      name: 'agentrelay-edge',
      metrics,
    }),
};
