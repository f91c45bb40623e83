import { Logger, type INestMicroservice } from '@nestjs/common';
import type { LoggingOptions } from '@app/logging';
import { startRelayMicroservice } from '@app/messaging';
import { logOutboundGuard, NotifierConfig } from './notifier.config';
import { NotifierModule } from './notifier.module';

export async function startNotifierService(config: NotifierConfig, options: LoggingOptions = {}): Promise<INestMicroservice> {
  const app = await startRelayMicroservice('notifier', NotifierModule.forRoot(config), config, options);
  logOutboundGuard(config, new Logger('SsrfGuard'));
  return app;
}
